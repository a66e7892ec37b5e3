#include "collective/nccl/nccl_env.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string_view>

#include "collective/nccl/nccl_constants.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace trainsim {

namespace {

constexpr std::uint8_t kAllAlgorithms = 0x7f;  // the 7 NCCL algorithms (P2P is not selectable)
constexpr std::uint8_t kAllProtocols = 0x07;

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> names{"Tree",     "Ring", "CollNetDirect", "CollNetChain", "NVLS",
                                              "NVLSTree", "PAT"};
  return names;
}
const std::vector<std::string>& protocol_names() {
  static const std::vector<std::string> names{"LL", "LL128", "Simple"};
  return names;
}
const std::vector<std::string>& function_names() {
  static const std::vector<std::string> names{"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
  return names;
}

int index_of(const std::vector<std::string>& names, std::string_view word) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (iequals(names[i], word)) return static_cast<int>(i);
  return -1;
}

[[noreturn]] void reject(const std::string& var, const std::string& message) {
  throw ScenarioError("", "nccl." + var, message);
}

// NCCL's parseList (2.30, src/tuning/cost_model.cc): "[^]a,b[;func:[^]c,d]...". Only the first entry
// may lack a "func:" prefix (it then applies to every function); '^' enables everything except the
// listed elements; each entry replaces that function's whole list and marks the function "forced".
void parse_list(const std::string& var, const std::string& value, const std::vector<std::string>& elements,
                std::array<std::uint8_t, kNumNcclFunctions>& mask, std::array<bool, kNumNcclFunctions>& forced) {
  const std::string valid = "valid values: " + join(elements) +
                            " (comma-separated, optional leading '^' to exclude, "
                            "optional 'function:' prefix per ';'-separated entry, function one of " +
                            join(function_names()) + ")";
  const auto entries = split(value, ';');
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const std::string entry = trim(entries[k]);
    if (entry.empty()) continue;  // strtok_r skips empty tokens
    std::string prefix, list = entry;
    if (const auto colon = entry.find(':'); colon != std::string::npos) {
      prefix = trim(entry.substr(0, colon));
      list = trim(entry.substr(colon + 1));
    } else if (k != 0) {
      reject(var, "'" + value + "': every entry except the first needs a 'function:' prefix; " + valid);
    }
    int func = -1;
    if (!prefix.empty()) {
      func = index_of(function_names(), prefix);
      if (func < 0) reject(var, "unknown function '" + prefix + "' in '" + value + "'; " + valid);
    }
    bool negate = false;
    if (!list.empty() && list[0] == '^') {
      negate = true;
      list = list.substr(1);
    }
    std::uint8_t listed = 0;
    bool any = false;
    for (const auto& raw : split(list, ',')) {
      const std::string word = trim(raw);
      if (word.empty()) continue;
      const int e = index_of(elements, word);
      if (e < 0) {
        const std::string guess = closest_match(word, elements);
        reject(var, "unknown value '" + word + "' in '" + value + "'" +
                        (guess.empty() ? std::string{} : " (did you mean '" + guess + "'?)") + "; " + valid);
      }
      listed = static_cast<std::uint8_t>(listed | (1u << e));
      any = true;
    }
    if (!any) reject(var, "empty list in '" + value + "'; " + valid);
    const std::uint8_t all = static_cast<std::uint8_t>((1u << elements.size()) - 1);
    const std::uint8_t result = negate ? static_cast<std::uint8_t>(all & ~listed) : listed;
    for (int f = 0; f < kNumNcclFunctions; ++f) {
      if (func >= 0 && f != func) continue;
      mask[f] = result;
      forced[f] = true;
    }
  }
}

int parse_int(const std::string& var, const std::string& value, int min_value, int max_value) {
  const std::string v = trim(value);
  int out = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc{} || ptr != v.data() + v.size() || out < min_value || out > max_value)
    reject(var, "'" + value + "' is not an integer in [" + std::to_string(min_value) + ", " +
                    std::to_string(max_value) + "]");
  return out;
}

int parse_multiple(const std::string& var, const std::string& value, int min_value, int max_value, int multiple) {
  const int out = parse_int(var, value, min_value, max_value);
  if (out % multiple != 0)
    reject(var, "'" + value + "' is not a multiple of " + std::to_string(multiple) +
                    " (valid: " + std::to_string(min_value) + ".." + std::to_string(max_value) + " in steps of " +
                    std::to_string(multiple) + ")");
  return out;
}

double parse_nonnegative(const std::string& var, const std::string& value) {
  const std::string v = trim(value);
  char* end = nullptr;
  const double out = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !(out >= 0)) reject(var, "'" + value + "' is not a number >= 0");
  return out;
}

}  // namespace

const char* to_string(NcclFunction f) { return function_names()[static_cast<std::size_t>(f)].c_str(); }

std::optional<NcclAlgorithm> parse_nccl_algorithm(const std::string& name) {
  const int i = index_of(algorithm_names(), name);
  if (i < 0) return std::nullopt;
  return static_cast<NcclAlgorithm>(i);
}

std::optional<NcclProtocol> parse_nccl_protocol(const std::string& name) {
  const int i = index_of(protocol_names(), name);
  if (i < 0) return std::nullopt;
  return static_cast<NcclProtocol>(i);
}

const std::vector<std::string>& known_nccl_variables() {
  // Honoured: ALGO, PROTO, MIN/MAX_NCHANNELS (+ legacy NRINGS), NVLS_ENABLE, NET_OVERHEAD, NTHREADS,
  // LL128_NTHREADS, BUFFSIZE, P2P_PXN_LEVEL, PXN_DISABLE, CROSS_NIC, COLLNET_ENABLE,
  // NCHANNELS_PER_NET_PEER, P2P_NET_CHUNKSIZE, NVLS_NCHANNELS, PAT_ENABLE, TOPO_FILE.
  // The rest are NCCL 2.30 variables (NCCL's env documentation and its NCCL_PARAM declarations) accepted and ignored
  // by this version of the model.
  static const std::vector<std::string> names{
      "NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_NRINGS", "NCCL_MAX_NRINGS",
      "NCCL_NVLS_ENABLE", "NCCL_NET_OVERHEAD", "NCCL_NTHREADS", "NCCL_LL128_NTHREADS", "NCCL_BUFFSIZE",
      "NCCL_P2P_PXN_LEVEL", "NCCL_PXN_DISABLE", "NCCL_CROSS_NIC", "NCCL_COLLNET_ENABLE", "NCCL_NCHANNELS_PER_NET_PEER",
      "NCCL_P2P_NET_CHUNKSIZE", "NCCL_NVLS_NCHANNELS", "NCCL_PAT_ENABLE", "NCCL_TOPO_FILE",
      // accepted, ignored
      "NCCL_MIN_CTAS", "NCCL_MAX_CTAS", "NCCL_LL_BUFFSIZE", "NCCL_LL128_BUFFSIZE", "NCCL_THREAD_THRESHOLDS",
      "NCCL_PXN_C2C", "NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ", "NCCL_NET_GDR_C2C", "NCCL_P2P_LEVEL",
      "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_NET_DISABLE_INTRA", "NCCL_NVLS_CHUNKSIZE",
      "NCCL_NVLSTREE_MAX_CHUNKSIZE", "NCCL_COLLNET_NODE_THRESHOLD", "NCCL_LL128_C2C", "NCCL_IB_QPS_PER_CONNECTION",
      "NCCL_IB_SPLIT_DATA_ON_QPS", "NCCL_IB_HCA", "NCCL_IB_TC", "NCCL_IB_SL", "NCCL_IB_AR_THRESHOLD",
      "NCCL_IB_MERGE_NICS", "NCCL_IB_GID_INDEX", "NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT", "NCCL_IB_DISABLE",
      "NCCL_IB_PCI_RELAXED_ORDERING", "NCCL_IB_ADAPTIVE_ROUTING", "NCCL_NETDEVS_POLICY", "NCCL_MIN_P2P_NCHANNELS",
      "NCCL_MAX_P2P_NCHANNELS", "NCCL_P2P_PCI_CHUNKSIZE", "NCCL_P2P_NVL_CHUNKSIZE", "NCCL_P2P_LL_THRESHOLD",
      "NCCL_P2P_SCHEDULE_GROUP_SIZE", "NCCL_P2P_MAX_PEERS", "NCCL_CHUNK_SIZE", "NCCL_ALLOC_P2P_NET_LL_BUFFERS",
      "NCCL_TOPO_DUMP_FILE", "NCCL_GRAPH_FILE", "NCCL_GRAPH_DUMP_FILE", "NCCL_MNNVL_ENABLE", "NCCL_ALLGATHERV_ENABLE",
      "NCCL_TUNER_PLUGIN", "NCCL_NET_PLUGIN", "NCCL_NET", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE",
      "NCCL_SOCKET_IFNAME", "NCCL_SOCKET_NTHREADS", "NCCL_NSOCKS_PERTHREAD", "NCCL_LAUNCH_MODE", "NCCL_CUMEM_ENABLE",
      "NCCL_SYM_KERNEL", "NCCL_CTA_POLICY", "NCCL_IGNORE_CPU_AFFINITY", "NCCL_NVB_DISABLE", "NCCL_RUNTIME_CONNECT",
      "NCCL_GRAPH_REGISTER", "NCCL_LOCAL_REGISTER", "NCCL_WORK_FIFO_DEPTH", "NCCL_LL_THRESHOLD", "NCCL_TREE_THRESHOLD",
      "NCCL_ASYNC_ERROR_HANDLING", "NCCL_BLOCKING_WAIT", "NCCL_P2P_USE_CUDA_MEMCPY", "NCCL_PROXY_PROFILE",
      "NCCL_COMM_BLOCKING", "NCCL_SET_THREAD_NAME", "NCCL_CHECK_POINTERS", "NCCL_GDRCOPY_ENABLE"};
  return names;
}

NcclEnv::NcclEnv() {
  algo_mask.fill(kAllAlgorithms);
  proto_mask.fill(kAllProtocols);
  forced.fill(false);
}

bool NcclEnv::user_allows(NcclFunction f, NcclAlgorithm a, NcclProtocol p) const {
  const auto fi = static_cast<std::size_t>(f);
  if (!forced[fi]) return true;
  return ((algo_mask[fi] >> static_cast<int>(a)) & 1u) && ((proto_mask[fi] >> static_cast<int>(p)) & 1u);
}

bool NcclEnv::user_allows_proto(NcclFunction f, NcclProtocol p) const {
  const auto fi = static_cast<std::size_t>(f);
  return !forced[fi] || ((proto_mask[fi] >> static_cast<int>(p)) & 1u);
}

NcclEnv NcclEnv::parse(const std::map<std::string, std::string>& env) {
  NcclEnv out;
  const auto& known = known_nccl_variables();
  for (const auto& [name, value] : env) {
    bool is_known = false;
    for (const auto& k : known) is_known = is_known || k == name;
    if (!is_known) {
      const std::string guess = closest_match(name, known);
      reject(name, "unknown NCCL variable '" + name + "'" +
                       (guess.empty() ? std::string{} : "; did you mean '" + guess + "'?"));
    }
  }
  auto get = [&](const char* name) -> std::optional<std::string> {
    const auto it = env.find(name);
    // An empty value (YAML null) means "not set", as for NCCL's getenv with an empty string.
    if (it == env.end() || trim(it->second).empty() || iequals(trim(it->second), "null")) return std::nullopt;
    return it->second;
  };

  // NCCL_PROTO: protocols start all enabled; each entry replaces its functions' list.
  if (auto v = get("NCCL_PROTO")) {
    out.proto_string = *v;
    parse_list("NCCL_PROTO", *v, protocol_names(), out.proto_mask, out.forced);
  }
  // NCCL_ALGO: once set, algorithms start from "nothing enabled" (NCCL zero-fills algoEnable when
  // NCCL_ALGO is non-empty) and parse_list fills in what each entry lists. Functions no entry names
  // stay unforced and keep every algorithm.
  if (auto v = get("NCCL_ALGO")) {
    out.algo_string = *v;
    out.algo_mask.fill(0);
    parse_list("NCCL_ALGO", *v, algorithm_names(), out.algo_mask, out.forced);
  }
  // Channel limits: NCCL_MAX_NCHANNELS wins over the legacy NCCL_MAX_NRINGS (NCCL env documentation).
  if (auto v = get("NCCL_MAX_NRINGS")) out.max_nchannels = parse_int("NCCL_MAX_NRINGS", *v, 1, nccl::kMaxChannels);
  if (auto v = get("NCCL_MAX_NCHANNELS"))
    out.max_nchannels = parse_int("NCCL_MAX_NCHANNELS", *v, 1, nccl::kMaxChannels);
  if (auto v = get("NCCL_MIN_NRINGS")) out.min_nchannels = parse_int("NCCL_MIN_NRINGS", *v, 0, nccl::kMaxChannels);
  if (auto v = get("NCCL_MIN_NCHANNELS"))
    out.min_nchannels = parse_int("NCCL_MIN_NCHANNELS", *v, 0, nccl::kMaxChannels);
  if (auto v = get("NCCL_NVLS_ENABLE")) out.nvls_enable = parse_int("NCCL_NVLS_ENABLE", *v, 0, 2);
  if (auto v = get("NCCL_NET_OVERHEAD")) {
    // ns per network step (NCCL's defaults: 1000 Intel, 2000 AMD hosts). A second per step is no host, and a
    // collective's thousands of steps would run past the simulator's picosecond clock.
    const double ns = parse_nonnegative("NCCL_NET_OVERHEAD", *v);
    if (ns > 1e9)
      reject("NCCL_NET_OVERHEAD", "'" + *v + "' ns is more than 1 s per network step (NCCL's default is 1000-2000)");
    out.net_overhead_us = ns / 1000.0;
  }
  // Thread counts: NCCL takes multiples of 32 in these ranges (enqueue.cc / init.cc) and falls back
  // to the default otherwise; a scenario asking for an impossible count is a mistake, so we refuse it.
  if (auto v = get("NCCL_NTHREADS")) out.nthreads = parse_multiple("NCCL_NTHREADS", *v, 64, 512, 32);
  if (auto v = get("NCCL_LL128_NTHREADS")) out.ll128_nthreads = parse_multiple("NCCL_LL128_NTHREADS", *v, 160, 640, 32);
  // FIFO and chunk sizes: powers of two are what NCCL is tested with; any multiple of the grain works.
  if (auto v = get("NCCL_BUFFSIZE")) out.buffsize = parse_multiple("NCCL_BUFFSIZE", *v, 64 << 10, 1 << 30, 4096);
  if (auto v = get("NCCL_P2P_NET_CHUNKSIZE"))
    out.p2p_net_chunksize = parse_multiple("NCCL_P2P_NET_CHUNKSIZE", *v, 4096, 64 << 20, 4096);
  if (auto v = get("NCCL_P2P_PXN_LEVEL")) out.p2p_pxn_level = parse_int("NCCL_P2P_PXN_LEVEL", *v, 0, 2);
  if (auto v = get("NCCL_PXN_DISABLE")) out.pxn_disable = parse_int("NCCL_PXN_DISABLE", *v, 0, 1) == 1;
  if (auto v = get("NCCL_CROSS_NIC")) out.cross_nic = parse_int("NCCL_CROSS_NIC", *v, 0, 2);
  if (auto v = get("NCCL_COLLNET_ENABLE")) out.collnet_enable = parse_int("NCCL_COLLNET_ENABLE", *v, 0, 1) == 1;
  if (auto v = get("NCCL_NCHANNELS_PER_NET_PEER"))
    out.nchannels_per_net_peer = parse_int("NCCL_NCHANNELS_PER_NET_PEER", *v, 1, nccl::kMaxChannels);
  if (auto v = get("NCCL_NVLS_NCHANNELS"))
    out.nvls_nchannels = parse_int("NCCL_NVLS_NCHANNELS", *v, 1, nccl::kMaxChannels);
  if (auto v = get("NCCL_PAT_ENABLE")) out.pat_enable = parse_int("NCCL_PAT_ENABLE", *v, 0, 2);
  if (auto v = get("NCCL_TOPO_FILE")) out.topo_file = trim(*v);
  return out;
}

}  // namespace trainsim
