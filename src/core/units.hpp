#pragma once
// Unit conventions used across trainsim. Names carry units where they could be doubted:
//   *_gbps  gigabits per second (1e9 bit/s)      *_GBps  gigabytes per second (1e9 B/s)
//   *_gib   gibibytes (2^30 B)                   *_mb    mebibytes (2^20 B), as in the scenario spec
#include <cstdint>

namespace trainsim {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;

constexpr double gbps_to_bytes_per_s(double gbps) { return gbps * 1e9 / 8.0; }
constexpr double GBps_to_bytes_per_s(double GBps) { return GBps * 1e9; }

}  // namespace trainsim
