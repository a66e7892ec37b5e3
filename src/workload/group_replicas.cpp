#include "workload/group_replicas.hpp"

#include <algorithm>
#include <set>

namespace trainsim {

namespace {

// Whether the members take every value of one coordinate.
template <typename Get>
bool spans(const std::vector<RankCoord>& coords, int size, Get get) {
  std::vector<char> seen(static_cast<std::size_t>(size), 0);
  for (const RankCoord& c : coords) seen[static_cast<std::size_t>(get(c))] = 1;
  return std::all_of(seen.begin(), seen.end(), [](char s) { return s != 0; });
}

// Groups spanning several pipeline stages (pipeline pairs, the embedding group, tp x pp, the world):
// translates by tp, cp and dp offsets.
std::vector<std::vector<int>> translates(const std::vector<int>& members, const ParallelPlan& plan) {
  std::vector<std::vector<int>> out;
  std::vector<RankCoord> coords;
  coords.reserve(members.size());
  for (int r : members) coords.push_back(plan.coord_of(r));
  const int nt = spans(coords, plan.tensor(), [](const RankCoord& c) { return c.tp; }) ? 1 : plan.tensor();
  const int nc = spans(coords, plan.context(), [](const RankCoord& c) { return c.cp; }) ? 1 : plan.context();
  const int nd = spans(coords, plan.data(), [](const RankCoord& c) { return c.dp; }) ? 1 : plan.data();
  std::set<std::vector<int>> seen;
  std::vector<int> copy(members.size());
  for (int d = 0; d < nd; ++d)
    for (int c = 0; c < nc; ++c)
      for (int t = 0; t < nt; ++t) {
        for (std::size_t i = 0; i < coords.size(); ++i) {
          const RankCoord& m = coords[i];
          copy[i] =
              plan.rank_of({(m.tp + t) % plan.tensor(), (m.cp + c) % plan.context(), (m.dp + d) % plan.data(), m.pp});
        }
        std::sort(copy.begin(), copy.end());
        if (seen.insert(copy).second) out.push_back(copy);
      }
  return out;
}

// Groups inside one stage. Every group Megatron's rank generators build (dense TP, CP, dp x cp; expert EP,
// expert-TP, etp x ep, expert-DP) is {min + sum of stride_i * j_i} over the coordinates it varies, so all groups
// of a kind are shifts of one pattern by their lowest rank and they partition the stage. Tiling the stage with
// the members' pattern, lowest uncovered rank first, therefore yields exactly the groups of the members' kind,
// whichever view they come from — the dense translates would not (an EP group covers part of the dp range and
// its tp/cp/dp translates straddle two EP groups).
std::vector<std::vector<int>> tiles(const std::vector<int>& members, const ParallelPlan& plan) {
  const int per_stage = plan.ranks_per_stage();
  const int first = plan.coord_of(members.front()).pp * per_stage;
  std::vector<char> covered(static_cast<std::size_t>(per_stage), 0);
  for (int r : members) covered[static_cast<std::size_t>(r - first)] = 1;
  std::vector<std::vector<int>> out{members};
  std::vector<int> copy(members.size());
  for (int u = 0; u < per_stage; ++u) {
    if (covered[static_cast<std::size_t>(u)] != 0) continue;
    bool fits = true;
    for (std::size_t i = 0; i < members.size() && fits; ++i) {
      const int idx = u + (members[i] - members.front());
      fits = idx < per_stage && covered[static_cast<std::size_t>(idx)] == 0;
      copy[i] = first + idx;
    }
    if (!fits) continue;  // not a tiling pattern (a hand-made subset): no copy starts here
    for (int r : copy) covered[static_cast<std::size_t>(r - first)] = 1;
    out.push_back(copy);
  }
  return out;
}

}  // namespace

std::vector<std::vector<int>> group_replicas(const std::vector<int>& members, const ParallelPlan& plan) {
  if (members.empty()) return {};
  const int stage = plan.coord_of(members.front()).pp;
  const bool one_stage = plan.coord_of(members.back()).pp == stage;  // members are sorted; pp is outermost
  return one_stage ? tiles(members, plan) : translates(members, plan);
}

std::vector<std::vector<int>> group_replicas(GroupKind kind, const std::vector<int>& members,
                                             const ParallelPlan& plan) {
  if (!is_expert_group(kind) || members.empty()) return group_replicas(members, plan);
  const int per_stage = plan.ranks_per_stage();
  const int first = plan.coord_of(members.front()).pp * per_stage;
  // The expert groups of one kind partition the stage: each rank's group is generated once, by its
  // first rank in ascending order, and marks all its members as covered.
  std::vector<char> covered(static_cast<std::size_t>(per_stage), 0);
  for (int r : members) covered[static_cast<std::size_t>(r - first)] = 1;
  std::vector<std::vector<int>> out{members};
  for (int i = 0; i < per_stage; ++i) {
    if (covered[static_cast<std::size_t>(i)] != 0) continue;
    std::vector<int> g = plan.group_members(kind, first + i);
    for (int r : g) covered[static_cast<std::size_t>(r - first)] = 1;
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace trainsim
