#include "network/link_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "core/check.hpp"
#include "core/error.hpp"

namespace trainsim::link_checks {

void check_arrays(const std::vector<double>& capacity_Bps, const std::vector<SimTime>& latency, const char* network) {
  TRAINSIM_CHECK(latency.size() == capacity_Bps.size(),
                 fmt::format("{}: {} link capacities but {} link latencies; one of each per link", network,
                             capacity_Bps.size(), latency.size()));
  if (capacity_Bps.size() > static_cast<std::size_t>(INT32_MAX))
    throw Error(fmt::format("{}: more links than LinkId can index", network));
  for (std::size_t l = 0; l < capacity_Bps.size(); ++l) {
    TRAINSIM_CHECK(
        std::isfinite(capacity_Bps[l]) && capacity_Bps[l] >= 0,
        fmt::format("{}: link {} capacity {} B/s; expected a finite number >= 0", network, l, capacity_Bps[l]));
    TRAINSIM_CHECK(latency[l] >= 0, fmt::format("{}: link {} latency {} ps is negative", network, l, latency[l]));
  }
}

void check_id(LinkId link, std::size_t links, const char* network, const char* what) {
  TRAINSIM_CHECK(link >= 0 && static_cast<std::size_t>(link) < links,
                 fmt::format("{}: {}: unknown link id {} (the network has links 0..{})", network, what, link,
                             static_cast<std::int64_t>(links) - 1));
}

SimTime path_latency(std::span<const LinkId> path, const std::vector<SimTime>& latency, const char* network) {
  SimTime total = 0;
  for (LinkId link : path) {
    check_id(link, latency.size(), network, "path_latency");
    total += latency[static_cast<std::size_t>(link)];
  }
  return total;
}

void check_start(std::span<const LinkId> path, std::int64_t bytes, double rate_cap_Bps, SimTime now,
                 SimTime network_now, std::vector<std::uint32_t>& seen, std::uint32_t& epoch, const char* network) {
  TRAINSIM_CHECK(bytes >= 0, fmt::format("{}: start: flow bytes {} is negative", network, bytes));
  TRAINSIM_CHECK(!path.empty(), fmt::format("{}: start: empty path (a flow crosses at least one link)", network));
  TRAINSIM_CHECK(rate_cap_Bps > 0, fmt::format("{}: start: rate cap {} B/s; expected a number > 0 (infinite for none)",
                                               network, rate_cap_Bps));
  TRAINSIM_CHECK(now >= network_now,
                 fmt::format("{}: start at {} ps is before the current time {} ps", network, now, network_now));
  if (++epoch == 0) {
    std::fill(seen.begin(), seen.end(), 0);
    epoch = 1;
  }
  for (LinkId link : path) {
    check_id(link, seen.size(), network, "start");
    std::uint32_t& stamp = seen[static_cast<std::size_t>(link)];
    TRAINSIM_CHECK(stamp != epoch, fmt::format("{}: start: path crosses link {} twice", network, link));
    stamp = epoch;
  }
}

}  // namespace trainsim::link_checks
