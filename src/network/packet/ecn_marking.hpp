#pragma once
// RED-style ECN marking (DCQCN's congestion point): the probability rises linearly from 0 at Kmin
// to Pmax at Kmax and is 1 above Kmax. The draw is a hash of (seed, flow serial, packet, hop), not
// a shared random stream, so a packet's fate does not depend on which other events ran before it.
#include <cstdint>

#include "network/packet/packet_config.hpp"

namespace trainsim {

inline double ecn_mark_probability(const EcnConfig& c, std::int64_t queue_bytes) {
  if (queue_bytes <= c.kmin_bytes) return 0;
  if (queue_bytes > c.kmax_bytes) return 1;
  return c.pmax * static_cast<double>(queue_bytes - c.kmin_bytes) / static_cast<double>(c.kmax_bytes - c.kmin_bytes);
}

// splitmix64's finaliser over the mixed inputs: a uniform draw in [0, 1).
inline double ecn_uniform(std::uint64_t seed, std::uint64_t flow_serial, std::uint64_t seq, std::uint64_t hop) {
  std::uint64_t z = seed ^ (flow_serial * 0x9e3779b97f4a7c15ULL) ^ (seq * 0xc2b2ae3d27d4eb4fULL) ^ (hop << 56);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

inline bool ecn_should_mark(const EcnConfig& c, std::int64_t queue_bytes, std::uint64_t seed, std::uint64_t flow_serial,
                            std::uint64_t seq, std::uint64_t hop) {
  const double p = ecn_mark_probability(c, queue_bytes);
  if (p <= 0) return false;
  if (p >= 1) return true;
  return ecn_uniform(seed, flow_serial, seq, hop) < p;
}

}  // namespace trainsim
