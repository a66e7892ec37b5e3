#pragma once
// The checks both transfer networks (flow/, packet/) make of what their caller gives them: the link arrays
// they are built on, link ids, and a transfer's start. Only trainsim's own code calls the networks, with input
// validated upstream, so a failure is an InternalError; `network` names the network in the message.
#include <cstdint>
#include <span>
#include <vector>

#include "core/time.hpp"
#include "network/network_types.hpp"

namespace trainsim::link_checks {

// One capacity (finite, bytes/s >= 0) and one latency (>= 0) per link, and no more links than LinkId indexes.
void check_arrays(const std::vector<double>& capacity_Bps, const std::vector<SimTime>& latency, const char* network);

void check_id(LinkId link, std::size_t links, const char* network, const char* what);

// The sum of the path's latencies, each link checked.
SimTime path_latency(std::span<const LinkId> path, const std::vector<SimTime>& latency, const char* network);

// A transfer's start: bytes >= 0, a non-empty path of known links crossing none twice (`seen` / `epoch`: the
// caller's per-link stamps, kept between calls), a positive rate cap, and no going back in time.
void check_start(std::span<const LinkId> path, std::int64_t bytes, double rate_cap_Bps, SimTime now,
                 SimTime network_now, std::vector<std::uint32_t>& seen, std::uint32_t& epoch, const char* network);

}  // namespace trainsim::link_checks
