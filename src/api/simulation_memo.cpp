#include "api/simulation_memo.hpp"

#include <bit>
#include <cstdint>

namespace trainsim {

namespace {

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

bool same(const CollectiveEstimate& a, const CollectiveEstimate& b) {
  return a.time == b.time && a.algorithm == b.algorithm && a.protocol == b.protocol && a.channels == b.channels &&
         same_bits(a.algbw_GBps, b.algbw_GBps) && same_bits(a.busbw_GBps, b.busbw_GBps);
}

bool same(const SimulationMemo::Key& a, const SimulationMemo::Key& b) {
  if (a.host_launch != b.host_launch || a.interference != b.interference || a.estimates.size() != b.estimates.size() ||
      a.compute_slowdown.size() != b.compute_slowdown.size())
    return false;
  for (std::size_t i = 0; i < a.compute_slowdown.size(); ++i)
    if (!same_bits(a.compute_slowdown[i], b.compute_slowdown[i])) return false;
  for (std::size_t i = 0; i < a.estimates.size(); ++i)
    if (!same(a.estimates[i], b.estimates[i])) return false;
  return true;
}

std::size_t ops_of(const SimulationOutput& out) {
  std::size_t n = 0;
  for (const RankTimeline& t : out.timelines) n += t.start.size();
  return n;
}

}  // namespace

const SimulationOutput* SimulationMemo::find(const Key& key) const {
  for (const auto& [k, out] : entries_)
    if (same(k, key)) return &out;
  return nullptr;
}

void SimulationMemo::remember(Key key, const SimulationOutput& out) {
  if (ops_of(out) > kMaxOps) return;
  if (entries_.size() == kEntries) entries_.pop_front();
  entries_.emplace_back(std::move(key), out);
}

}  // namespace trainsim
