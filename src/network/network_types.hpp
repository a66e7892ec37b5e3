#pragma once
// The flow-level network's vocabulary (docs/network-model.md): links are directed pipes with a
// capacity in bytes per second and a latency; flows are byte transfers over a fixed path of links.
#include <cstdint>
#include <limits>

namespace trainsim {

using LinkId = std::int32_t;  // index into the network's link arrays
using FlowId = std::int32_t;  // slot of an active flow; reused once the flow has finished and been reported

// A flow without its own rate limit (NIC, PCIe or protocol cap): only links constrain it.
inline constexpr double kUnlimitedRate = std::numeric_limits<double>::infinity();

}  // namespace trainsim
