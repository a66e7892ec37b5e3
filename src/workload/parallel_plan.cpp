#include "workload/parallel_plan.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace trainsim {

bool is_expert_group(GroupKind k) {
  return k == GroupKind::EP || k == GroupKind::ExpertTP || k == GroupKind::ExpertTPxEP || k == GroupKind::ExpertDP;
}

ParallelPlan::ParallelPlan(int tensor, int context, int data, int pipeline, int expert, int expert_tensor)
    : t_(tensor),
      c_(context),
      d_(data),
      p_(pipeline),
      e_(expert),
      te_(expert_tensor > 0 ? expert_tensor : tensor),
      de_(1) {
  if (t_ < 1 || c_ < 1 || d_ < 1 || p_ < 1 || e_ < 1) throw Error("parallel sizes must be positive");
  // parallel_state.py builds the expert generator with world = t_e * e * D_e * p and asserts that it
  // divides the world; with pp outermost that is t_e * e dividing a stage's t * c * D ranks.
  const int stage = t_ * c_ * d_;
  if (stage % (te_ * e_) != 0)
    throw Error("expert_tensor " + std::to_string(te_) + " x expert " + std::to_string(e_) + " does not divide the " +
                std::to_string(stage) + " ranks of a pipeline stage");
  de_ = stage / (te_ * e_);
}

RankCoord ParallelPlan::coord_of(int rank) const {
  RankCoord c;
  c.tp = rank % t_;
  rank /= t_;
  c.cp = rank % c_;
  rank /= c_;
  c.dp = rank % d_;
  c.pp = rank / d_;
  return c;
}

ExpertCoord ParallelPlan::expert_coord_of(int rank) const {
  ExpertCoord c;
  c.etp = rank % te_;
  rank /= te_;
  c.ep = rank % e_;
  rank /= e_;
  c.edp = rank % de_;
  c.pp = rank / de_;
  return c;
}

std::vector<int> ParallelPlan::group_members(GroupKind kind, int rank) const {
  const RankCoord me = coord_of(rank);
  const ExpertCoord ex = expert_coord_of(rank);
  std::vector<int> out;
  auto add = [&](RankCoord c) { out.push_back(rank_of(c)); };
  auto add_expert = [&](ExpertCoord c) { out.push_back(expert_rank_of(c)); };
  switch (kind) {
    case GroupKind::TP:
      for (int i = 0; i < t_; ++i) add({i, me.cp, me.dp, me.pp});
      break;
    case GroupKind::CP:
      for (int i = 0; i < c_; ++i) add({me.tp, i, me.dp, me.pp});
      break;
    case GroupKind::DP:  // Megatron's DDP group is dp x cp (weights are replicated across CP)
      for (int d = 0; d < d_; ++d)
        for (int c = 0; c < c_; ++c) add({me.tp, c, d, me.pp});
      break;
    case GroupKind::PP:
      for (int i = 0; i < p_; ++i) add({me.tp, me.cp, me.dp, i});
      break;
    case GroupKind::Embedding:
      add({me.tp, me.cp, me.dp, 0});
      if (p_ > 1) add({me.tp, me.cp, me.dp, p_ - 1});
      break;
    case GroupKind::ModelParallel:
      for (int pp = 0; pp < p_; ++pp)
        for (int tp = 0; tp < t_; ++tp) add({tp, me.cp, me.dp, pp});
      break;
    case GroupKind::World:
      for (int r = 0; r < world_size(); ++r) out.push_back(r);
      break;
    case GroupKind::EP:
      for (int i = 0; i < e_; ++i) add_expert({ex.etp, i, ex.edp, ex.pp});
      break;
    case GroupKind::ExpertTP:
      for (int i = 0; i < te_; ++i) add_expert({i, ex.ep, ex.edp, ex.pp});
      break;
    case GroupKind::ExpertTPxEP:
      for (int ep = 0; ep < e_; ++ep)
        for (int etp = 0; etp < te_; ++etp) add_expert({etp, ep, ex.edp, ex.pp});
      break;
    case GroupKind::ExpertDP:
      for (int i = 0; i < de_; ++i) add_expert({ex.etp, ex.ep, i, ex.pp});
      break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace trainsim
