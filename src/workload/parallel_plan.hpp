#pragma once
// Ranks and process groups, as Megatron-Core builds them (parallel_state.py, RankGenerator):
// order tp-cp-dp-pp, so global_rank = tp + t*(cp + c*(dp + D*pp)) (../shared/reference/megatron.md §1).
#include <cstdint>
#include <string>
#include <vector>

namespace trainsim {

struct RankCoord {
  int tp = 0, cp = 0, dp = 0, pp = 0;
};

// The kind of communicator a collective runs on; also the trace thread / report row it is shown under.
enum class GroupKind : std::uint8_t {
  TP,         // tensor parallel
  CP,         // context parallel
  DP,         // data parallel x context parallel (gradient reduction, parameter all-gather)
  PP,         // a pipeline pair (p2p between adjacent stages)
  Embedding,  // {first, last} pipeline stage, tied-embedding gradient all-reduce
  ModelParallel,  // tp x pp (optimizer scalars)
  World,
};

class ParallelPlan {
 public:
  ParallelPlan(int tensor, int context, int data, int pipeline);

  int world_size() const { return t_ * c_ * d_ * p_; }
  int tensor() const { return t_; }
  int context() const { return c_; }
  int data() const { return d_; }
  int pipeline() const { return p_; }

  int rank_of(const RankCoord& c) const { return c.tp + t_ * (c.cp + c_ * (c.dp + d_ * c.pp)); }
  RankCoord coord_of(int rank) const;

  // Members of the group of `kind` that contains `rank`, in ascending group-rank order.
  // For GroupKind::PP this is the whole pipeline group (all stages); p2p pairs are formed from it.
  std::vector<int> group_members(GroupKind kind, int rank) const;

 private:
  int t_, c_, d_, p_;
};

const char* to_string(GroupKind k);

}  // namespace trainsim
