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

}  // namespace

std::vector<std::vector<int>> group_replicas(const std::vector<int>& members, const ParallelPlan& plan) {
  std::vector<std::vector<int>> out;
  if (members.empty()) return out;
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
          copy[i] = plan.rank_of({(m.tp + t) % plan.tensor(), (m.cp + c) % plan.context(), (m.dp + d) % plan.data(), m.pp});
        }
        std::sort(copy.begin(), copy.end());
        if (seen.insert(copy).second) out.push_back(copy);
      }
  return out;
}

}  // namespace trainsim
