#pragma once
// Physical limits on the scenario's rates and times. A rate of 1e-6 Gb/s or a time of 1e300 s is a typo or a
// unit slip, never hardware: below the rate bounds the collective model's own search leaves its range (NCCL
// tries rings down to 0.12 GB/s per channel and prices anything slower as a flat 0.1 GB/s), and beyond the time
// bound the picosecond clock overflows. Each bound is far outside any real part, so no real scenario meets it.
#include <string>

#include "scenario/yaml_reader.hpp"

namespace trainsim::scenario_detail {

// Network interfaces: 1 Gb/s is the slowest Ethernet port on any server (GPU clusters use 100-800 Gb/s),
// and it keeps a NIC (0.125 GB/s) above the slowest per-channel speed NCCL's graph search tries (0.12 GB/s).
inline constexpr double kMinNicGbps = 1;
// GPU-to-GPU and GPU-to-NIC links (scale-up, PCIe): 1 GB/s is a single PCIe Gen3 lane; NVLink, Infinity Fabric
// and a x16 PCIe slot are 10 to 1000 times that.
inline constexpr double kMinLinkGBps = 1;
// Device memory: 10 GB/s is below any GPU's memory since the 2000s (today's HBM: 1.5-8 TB/s).
inline constexpr double kMinHbmGBps = 10;
// Dense peak per precision: 0.1 TFLOP/s is below an embedded GPU's; datacenter parts have 10-5000.
inline constexpr double kMinPeakTflops = 0.1;
// Down:up ratio of a switch tier: built fabrics taper at most ~1:16 (Llama 3's 1:7); beyond 100 a trunk carries
// less than 1% of one port, which is a link down, not a fabric.
inline constexpr double kMaxOversubscription = 100;
// Times (fault times, latencies): 1e6 s is 11.6 days, far beyond any iteration or fault time worth simulating,
// while the picosecond clock (int64) overflows at 9.2e6 s (106 days): sums of a few such times still fit.
inline constexpr double kMaxSeconds = 1e6;

// Refuses `value` of `key` below `minimum` (in `unit`, e.g. "Gb/s"), saying why no real part is that slow.
void require_at_least(const Section& section, const std::string& key, double value, double minimum,
                      const std::string& unit, const std::string& why);
// Refuses `value` of `key` above `maximum` (`unit` as above).
void require_at_most(const Section& section, const std::string& key, double value, double maximum,
                     const std::string& unit, const std::string& why);
// A time given in units of `seconds_per_unit` (1e-9 for a _ns key): refused beyond kMaxSeconds.
void require_time_in_range(const Section& section, const std::string& key, double value, double seconds_per_unit);

}  // namespace trainsim::scenario_detail
