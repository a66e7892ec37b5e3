#pragma once
// The scenario's `nccl:` block (NCCL environment variables, name -> value string), parsed the way
// NCCL 2.30 parses them (src/tuning/cost_model.cc `parseList`, ../shared/reference/nccl.md §5.4, §12).
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
  std::optional<int> max_nchannels;  // NCCL_MAX_NCHANNELS (legacy NCCL_MAX_NRINGS)
  std::optional<int> min_nchannels;  // NCCL_MIN_NCHANNELS (legacy NCCL_MIN_NRINGS)
  int nvls_enable = 2;               // NCCL_NVLS_ENABLE: 0 off, 1 on, 2 auto (= on where supported)
  std::optional<double> net_overhead_us;  // NCCL_NET_OVERHEAD (ns in the variable, µs here)
  std::string algo_string, proto_string;  // as given, for error messages

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
