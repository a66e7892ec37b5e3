#pragma once
// Ranks and process groups, as Megatron-Core builds them (parallel_state.py, RankGenerator; order
// tp-cp-ep-dp-pp, initialize_model_parallel). Two views of the same ranks:
//   dense  view: global_rank = tp  + t  *(cp + c*(dp + D*pp))         (attention, dense MLP, dp x cp grads)
//   expert view: global_rank = etp + t_e*(ep + e*(edp + D_e*pp))      (routed experts: EP, ETP, expert-DP)
// with D_e = t*c*D / (t_e*e). Pipeline is outermost in both, so a stage is the same block of ranks.
#include <cstdint>
#include <string>
#include <vector>

namespace trainsim {

struct RankCoord {
  int tp = 0, cp = 0, dp = 0, pp = 0;
};

struct ExpertCoord {
  int etp = 0, ep = 0, edp = 0, pp = 0;
};

// The kind of communicator a collective runs on; also the trace thread / report row it is shown under.
enum class GroupKind : std::uint8_t {
  TP,             // tensor parallel
  CP,             // context parallel
  DP,             // data parallel x context parallel (gradient reduction, parameter all-gather)
  PP,             // a pipeline pair (p2p between adjacent stages)
  Embedding,      // {first, last} pipeline stage, tied-embedding gradient all-reduce
  ModelParallel,  // tp x pp (optimizer scalars)
  World,
  EP,           // expert parallel: token all-to-all of the MoE dispatcher (stride t_e)
  ExpertTP,     // expert tensor parallel: token all-gather / reduce-scatter inside the dispatcher (stride 1)
  ExpertTPxEP,  // etp x ep: the allgather dispatcher's communicator
  ExpertDP,     // expert data parallel: expert-gradient reduction and expert parameter all-gather (stride t_e*e)
};

// True for the groups of the expert view.
bool is_expert_group(GroupKind k);

class ParallelPlan {
 public:
  // `expert_tensor` 0 means equal to `tensor` (Megatron's default for --expert-tensor-parallel-size).
  // Throws Error when t_e * e does not divide t * c * D (the expert view must tile a pipeline stage).
  ParallelPlan(int tensor, int context, int data, int pipeline, int expert = 1, int expert_tensor = 0);

  int world_size() const { return t_ * c_ * d_ * p_; }
  int tensor() const { return t_; }
  int context() const { return c_; }
  int data() const { return d_; }
  int pipeline() const { return p_; }
  int expert() const { return e_; }
  int expert_tensor() const { return te_; }
  int expert_data() const { return de_; }  // D_e = world / (t_e * e * p)
  int ranks_per_stage() const { return t_ * c_ * d_; }

  int rank_of(const RankCoord& c) const { return c.tp + t_ * (c.cp + c_ * (c.dp + d_ * c.pp)); }
  RankCoord coord_of(int rank) const;
  int expert_rank_of(const ExpertCoord& c) const { return c.etp + te_ * (c.ep + e_ * (c.edp + de_ * c.pp)); }
  ExpertCoord expert_coord_of(int rank) const;

  // Members of the group of `kind` that contains `rank`, in ascending group-rank order.
  // For GroupKind::PP this is the whole pipeline group (all stages); p2p pairs are formed from it.
  std::vector<int> group_members(GroupKind kind, int rank) const;

 private:
  int t_, c_, d_, p_, e_, te_, de_;
};

const char* to_string(GroupKind k);

}  // namespace trainsim
