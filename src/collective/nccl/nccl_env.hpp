#pragma once
// The scenario's `nccl:` block (NCCL environment variables, name -> value string), parsed the way
// NCCL 2.30 parses them (src/tuning/cost_model.cc `parseList`; NCCL_PARAM defaults, NCCL's env documentation).
// Values NCCL would reject raise ScenarioError with the key "nccl.<NAME>".
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collective/collective_model.hpp"

namespace trainsim {

// NCCL's collective functions in its own order (ncclFunc_t): the prefixes NCCL_ALGO/NCCL_PROTO accept.
enum class NcclFunction : std::uint8_t { Broadcast, Reduce, AllGather, ReduceScatter, AllReduce };
inline constexpr int kNumNcclFunctions = 5;
const char* to_string(NcclFunction f);

struct NcclEnv {
  // Per function: the algorithms / protocols the user lists allow, and whether the user constrained
  // that function at all ("forced" in NCCL: a function named by no list keeps NCCL's defaults).
  std::array<std::uint8_t, kNumNcclFunctions> algo_mask{};   // bit = NcclAlgorithm index
  std::array<std::uint8_t, kNumNcclFunctions> proto_mask{};  // bit = NcclProtocol index
  std::array<bool, kNumNcclFunctions> forced{};
  std::optional<int> max_nchannels;            // NCCL_MAX_NCHANNELS (legacy NCCL_MAX_NRINGS)
  std::optional<int> min_nchannels;            // NCCL_MIN_NCHANNELS (legacy NCCL_MIN_NRINGS)
  int nvls_enable = 2;                         // NCCL_NVLS_ENABLE: 0 off, 1 on, 2 auto (= on where supported)
  std::optional<double> net_overhead_us;       // NCCL_NET_OVERHEAD (ns in the variable, µs here)
  std::optional<int> nthreads;                 // NCCL_NTHREADS: Ring/Tree LL and Simple threads per CTA (64..512, ×32)
  std::optional<int> ll128_nthreads;           // NCCL_LL128_NTHREADS (160..640, ×32)
  std::int64_t buffsize = 4 << 20;             // NCCL_BUFFSIZE: Simple FIFO bytes (step = buffsize / 8)
  int p2p_pxn_level = 2;                       // NCCL_P2P_PXN_LEVEL: 0 never, 1 when needed, 2 always
  bool pxn_disable = false;                    // NCCL_PXN_DISABLE
  int cross_nic = 2;                           // NCCL_CROSS_NIC: 0, 1, 2
  bool collnet_enable = false;                 // NCCL_COLLNET_ENABLE (a CollNet/SHARP plugin is present)
  std::optional<int> nchannels_per_net_peer;   // NCCL_NCHANNELS_PER_NET_PEER
  std::int64_t p2p_net_chunksize = 128 << 10;  // NCCL_P2P_NET_CHUNKSIZE
  std::optional<int> nvls_nchannels;           // NCCL_NVLS_NCHANNELS
  int pat_enable = 2;                          // NCCL_PAT_ENABLE: 0 off, 1 on, 2 auto (one rank per node)
  std::string topo_file;                       // NCCL_TOPO_FILE: node topology XML (empty = generated)
  std::string algo_string, proto_string;       // as given, for error messages

  NcclEnv();
  // Whether the user's NCCL_ALGO / NCCL_PROTO allow (algo, proto) for `f`.
  bool user_allows(NcclFunction f, NcclAlgorithm a, NcclProtocol p) const;
  bool user_allows_proto(NcclFunction f, NcclProtocol p) const;

  // Throws ScenarioError("", "nccl.<NAME>", ...) for unknown variables (with the closest known
  // name) and for values NCCL would reject.
  static NcclEnv parse(const std::map<std::string, std::string>& env);
};

// Every NCCL variable trainsim recognises (honoured or accepted and ignored), for suggestions.
const std::vector<std::string>& known_nccl_variables();

// Case-insensitive name lookups with NCCL's spellings; nullopt when unknown.
std::optional<NcclAlgorithm> parse_nccl_algorithm(const std::string& name);
std::optional<NcclProtocol> parse_nccl_protocol(const std::string& name);

}  // namespace trainsim
