#pragma once
// Byte counts as the collective, network and workload APIs take them (std::int64_t). core/units.hpp's kGiB and
// kMiB are doubles, for rates and reports; these are exact integers, so sizes built from them stay exact.
#include <cstdint>

namespace trainsim::test {

inline constexpr std::int64_t KiB = 1024;
inline constexpr std::int64_t MiB = 1024 * KiB;
inline constexpr std::int64_t GiB = 1024 * MiB;

}  // namespace trainsim::test
