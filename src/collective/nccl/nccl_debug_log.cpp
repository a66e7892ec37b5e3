#include "collective/nccl/nccl_debug_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "collective/nccl/nccl_constants.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace trainsim {

namespace {

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// NCCL_TOPO_ID(systemId, localId) as ncclTopoPrintGraph prints it ("%lx-%lx"): one host per NCCL topology
// here (system 0); a GPU's local id is its PCI bus id, a NET's its device index.
std::string topo_id(const char* kind, std::int64_t local) { return fmt::format(" {}/0-{:x}", kind, local); }

void graph_lines(const NcclCommunicator& comm, const SearchGraph& g, std::vector<std::string>& out) {
  if (g.nchannels <= 0) return;
  out.push_back(fmt::format("Pattern {}, crossNic {}, nChannels {}, bw {:.6f}/{:.6f}, type {}/{}, sameChannels {}",
                            static_cast<int>(g.pattern), g.cross_nic, g.nchannels, g.bw_intra, g.bw_inter,
                            to_string(g.type_intra), to_string(g.type_inter), g.same_channels ? 1 : 0));
  const NodeTopology& node = *comm.node_topology.front();
  const bool nets = comm.nnodes > 1 && !node.nets.empty();
  for (int c = 0; c < g.nchannels && c < static_cast<int>(g.intra.size()); ++c) {
    std::string line = fmt::format("{:2d} :", c);
    const auto net = [&](const std::vector<int>& v) {
      const int n = c < static_cast<int>(v.size()) ? v[static_cast<std::size_t>(c)] : -1;
      if (n >= 0)
        line += topo_id("NET", node.vertices[static_cast<std::size_t>(node.nets[static_cast<std::size_t>(n)])].id);
    };
    if (nets) net(g.net_in);
    for (int local : g.intra[static_cast<std::size_t>(c)]) {
      line += topo_id("GPU", node.vertices[static_cast<std::size_t>(node.gpus[static_cast<std::size_t>(local)])].id);
      if (g.pattern == GraphPattern::Nvls) break;  // NVLS graphs only use the first GPU
    }
    if (nets) net(g.net_out);
    out.push_back(std::move(line));
  }
}

// rings.cc dumpLine: the prefix, then each rank at the width of the largest, cut at 127 characters with "...".
std::string dump_line(const std::string& prefix, const std::vector<int>& values) {
  constexpr std::size_t kLineLength = 128;
  const int width = static_cast<int>(std::to_string(std::max<std::size_t>(values.size(), 1) - 1).size());
  std::string line = prefix;
  for (std::size_t i = 0; i < values.size() && line.size() < kLineLength - 1; ++i)
    line += fmt::format(" {:>{}}", values[i], width);
  if (line.size() >= kLineLength) line = line.substr(0, kLineLength - 4) + "...";
  return line;
}

void init_lines(const NcclCommunicator& comm, std::vector<std::string>& out) {
  out.push_back(fmt::format("comm 0x0 rank 0 nRanks {} nNodes {} localRanks {} localRank 0 MNNVL 0", comm.nranks,
                            comm.nnodes, comm.node_ranks.empty() ? 0 : comm.node_ranks.front().size()));
  const int n = static_cast<int>(comm.rings.size());
  for (int c = 0; c < n; ++c)
    out.push_back(
        dump_line(fmt::format("Channel {:02d}/{:02d} :", c, n), comm.rings[static_cast<std::size_t>(c)].order));
  if (!comm.trees.empty()) {
    std::string line = "Trees";
    for (std::size_t c = 0; c < comm.trees.size(); ++c) {
      const TreeChannel& t = comm.trees[c];
      line += fmt::format(" [{}] {}/{}/{}->0->{}", c, t.down[0][0], t.down[0][1], t.down[0][2], t.up[0]);
    }
    out.push_back(std::move(line));
  }
  out.push_back(
      fmt::format("{} coll channels, {} collnet channels, {} nvls channels, {} p2p channels, {} p2p channels "
                  "per peer",
                  comm.nchannels, comm.collnet ? comm.nchannels : 0, comm.nvls_channels, comm.p2p_nchannels,
                  comm.p2p_channels_per_peer));
}

// comm->maxThreads as NCCL's init sets them (src/init.cc, getNthreads): LL and LL128 for Ring and Tree, Simple
// for Ring (256 on a PCIe-only node), Tree and PAT, NCCL_MAX_NTHREADS for CollNet and NVLS Simple; 0 elsewhere.
int max_threads(const NcclTuningModel& t, NcclAlgorithm a, NcclProtocol p) {
  const NcclEnv& env = t.env();
  const bool ring_or_tree = a == NcclAlgorithm::Ring || a == NcclAlgorithm::Tree;
  switch (p) {
    case NcclProtocol::LL: return ring_or_tree ? env.nthreads.value_or(nccl::kMaxThreadsLL) : 0;
    case NcclProtocol::LL128: return ring_or_tree ? env.ll128_nthreads.value_or(nccl::kMaxThreadsLL128) : 0;
    case NcclProtocol::Simple:
      if (a == NcclAlgorithm::Ring || a == NcclAlgorithm::PAT)
        return env.nthreads.value_or(t.topology().ring_simple_threads);
      if (a == NcclAlgorithm::Tree) return env.nthreads.value_or(nccl::kMaxThreadsSimple);
      return nccl::kMaxThreadsNvls;  // NCCL_MAX_NTHREADS: CollNet and NVLS
  }
  return 0;
}

void tuning_lines(const NcclTuningModel& t, std::vector<std::string>& out) {
  constexpr int kTunedAlgorithms = 7;  // Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT
  constexpr NcclProtocol kProtocols[] = {NcclProtocol::LL, NcclProtocol::LL128, NcclProtocol::Simple};
  for (int block = 0; block < (kTunedAlgorithms + 2) / 3; ++block) {
    std::string algorithms = "  Algorithm   |", protocols = "  Protocol    |", threads = " Max NThreads |";
    for (int ba = 0; ba < 3; ++ba) {
      const int a = block * 3 + ba;
      for (NcclProtocol p : kProtocols) protocols += fmt::format(" {:>14} |", to_string(p));
      if (a >= kTunedAlgorithms) continue;
      algorithms += fmt::format(" {:>14}   {:>14}   {:>14} |", "", to_string(static_cast<NcclAlgorithm>(a)), "");
      for (NcclProtocol p : kProtocols)
        threads += fmt::format(" {:>14} |", max_threads(t, static_cast<NcclAlgorithm>(a), p));
    }
    out.push_back(algorithms);
    out.push_back(protocols);
    out.push_back(threads);
    for (int f = 0; f < kNumNcclFunctions; ++f) {
      std::string line = fmt::format("{:>13} |", to_string(static_cast<NcclFunction>(f)));
      for (int ba = 0; ba < 3; ++ba) {
        const int a = block * 3 + ba;
        if (a >= kTunedAlgorithms) continue;
        for (NcclProtocol p : kProtocols) {
          const NcclCostEntry e = t.entry(static_cast<NcclFunction>(f), static_cast<NcclAlgorithm>(a), p);
          line += fmt::format("{:8.1f}/{:6.1f} |", e.latency_us, e.algbw_GBps);
        }
      }
      out.push_back(std::move(line));
    }
  }
}

// ncclTopoGetXmlFromGraph: attributes in NCCL's order, floats as xmlSetAttrFloat prints them (%g), the channel's
// NETs and GPUs by NCCL_TOPO_ID (system 0: the device index), NVLS graphs with their first GPU only.
void graph_xml(const NcclCommunicator& comm, const SearchGraph& g, int id, std::string& out) {
  const bool nets = comm.nnodes > 1 && !comm.node_topology.empty() && !comm.node_topology.front()->nets.empty();
  out += fmt::format(
      "  <graph id=\"{}\" pattern=\"{}\" crossnic=\"{}\" nchannels=\"{}\" speedintra=\"{:g}\" "
      "speedinter=\"{:g}\" latencyinter=\"{:g}\" typeintra=\"{}\" typeinter=\"{}\" samechannels=\"{}\"",
      id, static_cast<int>(g.pattern), g.cross_nic, g.nchannels, g.bw_intra, g.bw_inter, g.latency_inter,
      to_string(g.type_intra), to_string(g.type_inter), g.same_channels ? 1 : 0);
  if (g.nchannels <= 0) {
    out += "/>\n";
    return;
  }
  out += ">\n";
  const NodeTopology& node = *comm.node_topology.front();
  for (int c = 0; c < g.nchannels && c < static_cast<int>(g.intra.size()); ++c) {
    out += "    <channel>\n";
    const auto net = [&](const std::vector<int>& v) {
      const int n = c < static_cast<int>(v.size()) ? v[static_cast<std::size_t>(c)] : -1;
      if (nets && n >= 0)
        out += fmt::format("      <net dev=\"{}\"/>\n",
                           node.vertices[static_cast<std::size_t>(node.nets[static_cast<std::size_t>(n)])].id);
    };
    net(g.net_in);
    for (int local : g.intra[static_cast<std::size_t>(c)]) {
      const TopoVertex& gpu = node.vertices[static_cast<std::size_t>(node.gpus[static_cast<std::size_t>(local)])];
      out += fmt::format("      <gpu dev=\"{}\" rank=\"{}\"/>\n", gpu.dev, local);
      if (g.pattern == GraphPattern::Nvls) break;
    }
    net(g.net_out);
    out += "    </channel>\n";
  }
  out += "  </graph>\n";
}

}  // namespace

std::string nccl_graph_xml(const NcclCommunicator& comm) {
  std::string out = "<graphs version=\"1\">\n";
  if (!comm.node_topology.empty()) {
    // graphs[a] by NCCL algorithm (init.cc); the ids are the graphs' own (ring 0, tree 1, collnet chain 2,
    // NVLS 3, collnet direct 4).
    graph_xml(comm, comm.tree_graph, 1, out);
    graph_xml(comm, comm.ring_graph, 0, out);
    graph_xml(comm, comm.collnet_direct_graph, 4, out);
    graph_xml(comm, comm.collnet_chain_graph, 2, out);
    graph_xml(comm, comm.nvls_graph, 3, out);
    graph_xml(comm, comm.nvls_graph, 3, out);
    graph_xml(comm, comm.tree_graph, 1, out);
  }
  return out + "</graphs>\n";
}

std::optional<NcclDebugSubsystems> nccl_debug_subsystems(const std::map<std::string, std::string>& env) {
  const auto level = env.find("NCCL_DEBUG");
  if (level == env.end()) return std::nullopt;
  const std::string l = upper(trim(level->second));
  if (l.empty() || l == "VERSION" || l == "WARN" || l == "ABORT") return std::nullopt;  // no INFO lines
  if (l != "INFO" && l != "TRACE")
    throw ScenarioError("", "nccl.NCCL_DEBUG",
                        "unknown level '" + level->second + "'; NCCL knows VERSION, WARN, INFO, ABORT and TRACE");
  NcclDebugSubsystems s;
  const auto list = env.find("NCCL_DEBUG_SUBSYS");
  std::string text = list == env.end() ? std::string("INIT,BOOTSTRAP,ENV") : upper(trim(list->second));
  const bool invert = !text.empty() && text.front() == '^';
  if (invert) text.erase(0, 1);
  std::stringstream words(text);
  std::string word;
  while (std::getline(words, word, ',')) {
    word = trim(word);
    static const char* const kKnown[] = {"INIT",      "COLL", "P2P",     "SHM",  "NET",   "GRAPH",
                                         "TUNING",    "ENV",  "ALLOC",   "CALL", "PROXY", "NVLS",
                                         "BOOTSTRAP", "REG",  "PROFILE", "RAS",  "ALL"};
    if (std::find(std::begin(kKnown), std::end(kKnown), word) == std::end(kKnown))
      throw ScenarioError("", "nccl.NCCL_DEBUG_SUBSYS",
                          "unknown subsystem '" + word +
                              "'; NCCL knows INIT, COLL, P2P, SHM, NET, GRAPH, TUNING, ENV, "
                              "ALLOC, CALL, PROXY, NVLS, BOOTSTRAP, REG, PROFILE, RAS and ALL");
    const bool all = word == "ALL";
    if (all || word == "INIT") s.init = true;
    if (all || word == "GRAPH") s.graph = true;
    if (all || word == "TUNING") s.tuning = true;
  }
  if (invert) s = {!s.init, !s.graph, !s.tuning};
  if (!s.any()) return std::nullopt;
  return s;
}

std::vector<std::string> nccl_debug_lines(const NcclCommunicator& comm, const NcclTuningModel& tuning,
                                          const NcclDebugSubsystems& subsystems) {
  std::vector<std::string> out;
  if (subsystems.graph && !comm.node_topology.empty()) {
    graph_lines(comm, comm.ring_graph, out);
    graph_lines(comm, comm.tree_graph, out);
    graph_lines(comm, comm.nvls_graph, out);
  }
  if (subsystems.init) init_lines(comm, out);
  if (subsystems.tuning) tuning_lines(tuning, out);
  return out;
}

}  // namespace trainsim
