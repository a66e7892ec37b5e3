#include "workload/parallel_plan.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace trainsim {

ParallelPlan::ParallelPlan(int tensor, int context, int data, int pipeline)
    : t_(tensor), c_(context), d_(data), p_(pipeline) {
  if (t_ < 1 || c_ < 1 || d_ < 1 || p_ < 1) throw Error("parallel sizes must be positive");
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

std::vector<int> ParallelPlan::group_members(GroupKind kind, int rank) const {
  const RankCoord me = coord_of(rank);
  std::vector<int> out;
  auto add = [&](RankCoord c) { out.push_back(rank_of(c)); };
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
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace trainsim
