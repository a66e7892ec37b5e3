#include "api/compute_intervals.hpp"

#include <algorithm>

namespace trainsim {

std::vector<Interval> compute_intervals(const RankProgram& p, const RankTimeline& t) {
  std::vector<Interval> v;
  for (std::size_t i = 0; i < p.ops.size(); ++i)
    if (p.ops[i].stream == Stream::Compute && t.end[i] > t.start[i]) v.push_back({t.start[i], t.end[i]});
  // One compute stream runs its kernels one after another: they come sorted, and checking is cheaper than sorting.
  const auto earlier = [](const Interval& a, const Interval& b) { return a.start < b.start; };
  if (!std::is_sorted(v.begin(), v.end(), earlier)) std::sort(v.begin(), v.end(), earlier);
  return v;
}

SimTime covered(const std::vector<Interval>& busy, SimTime a, SimTime b) {
  auto it = std::upper_bound(busy.begin(), busy.end(), a, [](SimTime x, const Interval& iv) { return x < iv.end; });
  SimTime sum = 0;
  for (; it != busy.end() && it->start < b; ++it) sum += std::min(b, it->end) - std::max(a, it->start);
  return sum;
}

}  // namespace trainsim
