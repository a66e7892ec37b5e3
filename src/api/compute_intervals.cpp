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

namespace {

using Iter = std::vector<Interval>::const_iterator;

// The first interval of [from, to) that ends after `a` (the intervals end in time order).
Iter first_ending_after(Iter from, Iter to, SimTime a) {
  return std::upper_bound(from, to, a, [](SimTime x, const Interval& iv) { return x < iv.end; });
}

SimTime overlap_from(const std::vector<Interval>& busy, Iter it, SimTime a, SimTime b) {
  SimTime sum = 0;
  for (; it != busy.end() && it->start < b; ++it) sum += std::min(b, it->end) - std::max(a, it->start);
  return sum;
}

}  // namespace

SimTime covered(const std::vector<Interval>& busy, SimTime a, SimTime b) {
  return overlap_from(busy, first_ending_after(busy.begin(), busy.end(), a), a, b);
}

SimTime CoveredScan::operator()(SimTime a, SimTime b) {
  const std::vector<Interval>& busy = *busy_;
  if (a < last_start_) first_ = 0;
  last_start_ = a;
  // Gallop: 1, 2, 4, ... intervals on until one ends after a, then search the last step.
  std::size_t lo = first_, step = 1;
  while (lo + step < busy.size() && busy[lo + step].end <= a) {
    lo += step;
    step *= 2;
  }
  const auto from = busy.begin() + static_cast<std::ptrdiff_t>(lo);
  const auto to = busy.begin() + static_cast<std::ptrdiff_t>(std::min(busy.size(), lo + step + 1));
  const Iter it = first_ending_after(from, to, a);
  first_ = static_cast<std::size_t>(it - busy.begin());
  return overlap_from(busy, it, a, b);
}

}  // namespace trainsim
