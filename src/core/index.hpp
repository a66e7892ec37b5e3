#pragma once
// An int that is known to be non-negative (a rank, a channel, a node) as a container index.
#include <cstddef>

namespace trainsim {

constexpr std::size_t idx(int v) { return static_cast<std::size_t>(v); }

}  // namespace trainsim
