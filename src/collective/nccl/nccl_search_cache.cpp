#include "collective/nccl/nccl_search_cache.hpp"

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

namespace trainsim {

namespace {

// The memo's key: two independent 64-bit hashes (FNV-1a, and a multiply-xorshift mix) of everything the
// graph search reads, and how many bytes went in. Fields are fed one by one (not raw structs: padding is
// indeterminate); a field left out would let two different nodes share an answer, so every field of the
// vertices, their links and every path is here.
class Fingerprint {
 public:
  template <class T>
  void add(const T& v) {
    static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>);
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));
    for (const unsigned char b : bytes) {
      fnv_ = (fnv_ ^ b) * 1099511628211ULL;
      mix_ = (mix_ ^ b) * 0x9E3779B97F4A7C15ULL;
      mix_ ^= mix_ >> 29;
    }
    size_ += sizeof(T);
  }
  std::tuple<std::size_t, std::uint64_t, std::uint64_t> key() const { return {size_, fnv_, mix_}; }

 private:
  std::uint64_t fnv_ = 1469598103934665603ULL;
  std::uint64_t mix_ = 0x243F6A8885A308D3ULL;
  std::size_t size_ = 0;
};

using Key = std::tuple<std::size_t, std::uint64_t, std::uint64_t>;

// A search inside one node (a communicator on a single host) never leaves it: NCCL trims the NETs of such a
// communicator away (ncclTopoTrimSystem), and the search walks no path to a NET without inter-node traffic. So
// the NETs' bandwidths are not among its inputs: left out of the key and set to zero in the node searched, a
// sweep of NIC speeds reuses the intra-node graphs (and a search that did read them would show as changed graphs).
bool is_net(const NodeTopology& node, int v) {
  return node.vertices[static_cast<std::size_t>(v)].kind == TopoKind::Net;
}

NodeTopology without_net_bandwidth(const NodeTopology& node) {
  NodeTopology out = node;
  for (std::size_t v = 0; v < out.vertices.size(); ++v) {
    TopoVertex& vx = out.vertices[v];
    const bool net = vx.kind == TopoKind::Net;
    if (net) vx.net_bw = 0;
    for (TopoLink& l : vx.links)
      if (net || is_net(node, l.to)) l.bw = 0;
  }
  for (std::size_t from = 0; from < out.paths.size(); ++from)
    for (std::size_t to = 0; to < out.paths[from].size(); ++to)
      if (is_net(node, static_cast<int>(from)) || is_net(node, static_cast<int>(to))) out.paths[from][to].bw = 0;
  return out;
}

// The node as given, for a search inside one node: the NETs' bandwidths are left out (such a search does not read
// them), every other field of the vertices, their links and every path is in.
Key key_of(const NodeTopology& node, const SearchOptions& options, bool nvls, bool collnet) {
  Fingerprint f;
  f.add(options.cross_nic);
  f.add(options.multi_node);
  f.add(options.min_channels);
  f.add(options.max_channels);
  f.add(options.replay_fruitless_tries);
  f.add(nvls);
  f.add(collnet);
  f.add(node.sm);
  f.add(node.arch);
  f.add(node.vendor);
  f.add(node.nvswitch);
  for (const std::vector<int>* list : {&node.gpus, &node.nets, &node.cpus}) {
    f.add(list->size());
    for (int v : *list) f.add(v);
  }
  f.add(node.vertices.size());
  for (const TopoVertex& v : node.vertices) {
    const bool net = v.kind == TopoKind::Net;
    f.add(v.kind);
    f.add(v.id);
    f.add(v.dev);
    f.add(v.rank);
    f.add(v.sm);
    f.add(v.gdr);
    if (v.kind != TopoKind::Net) f.add(v.net_bw);
    f.add(v.latency_us);
    f.add(v.guid);
    f.add(v.port);
    f.add(v.rail);
    f.add(v.plane);
    f.add(v.arch);
    f.add(v.vendor);
    f.add(v.inter_socket_bw);
    f.add(v.links.size());
    for (const TopoLink& l : v.links) {
      f.add(l.to);
      f.add(l.type);
      if (!(net || is_net(node, l.to))) f.add(l.bw);
    }
  }
  f.add(node.paths.size());
  for (std::size_t from = 0; from < node.paths.size(); ++from) {
    const auto& row = node.paths[from];
    f.add(row.size());
    for (std::size_t to = 0; to < row.size(); ++to) {
      const TopoPath& p = row[to];
      f.add(p.type);
      if (!(is_net(node, static_cast<int>(from)) || is_net(node, static_cast<int>(to)))) f.add(p.bw);
      f.add(p.links.size());
      for (const auto& [via, link] : p.links) {
        f.add(via);
        f.add(link);
      }
    }
  }
  return f.key();
}

// A search's graphs, and for a multi-node search the NET bandwidths it started from and how far they may move with
// the same graphs found (NodeGraphSearch::net_moves).
struct Entry {
  std::vector<float> net_values;
  NetBandwidthMoves moves;
  NodeGraphs graphs;
  bool answers(const std::vector<float>& values) const {
    if (values.size() != net_values.size()) return false;
    for (std::size_t i = 0; i < values.size(); ++i)
      if (!moves.allow(static_cast<double>(values[i]) - static_cast<double>(net_values[i]))) return false;
    return true;
  }
};

// Enough for every group shape of many jobs and the NIC speeds of a long sweep; past it the memo starts again
// rather than grow without bound.
constexpr std::size_t kMaxEntries = 4096;

Key key_of(const CanonicalSearchInputs& in, bool nvls, bool collnet) {
  Fingerprint f;
  f.add(nvls);
  f.add(collnet);
  f.add(in.words.size());
  for (const std::uint64_t w : in.words) f.add(w);
  return f.key();
}

}  // namespace

NodeGraphs cached_search_node_graphs(const NodeTopology& node, const SearchOptions& options, bool search_nvls,
                                     bool search_collnet) {
  static std::mutex mutex;
  // By what the search reads (CanonicalSearchInputs): nodes alike up to which hosts, NICs and bus ids they hold
  // share an entry. And, for searches inside one node, by the node as given, which is found without setting up a
  // search (a sweep of NIC speeds asks for the same intra-node groups at every point).
  static std::map<Key, std::vector<Entry>> memo;
  static std::map<Key, NodeGraphs> by_node;
  static std::size_t entries = 0;
  const auto lookup = [&](const Key& key, const std::vector<float>& values) -> const NodeGraphs* {
    const auto it = memo.find(key);
    if (it == memo.end()) return nullptr;
    for (const Entry& e : it->second)
      if (e.answers(values)) return &e.graphs;
    return nullptr;
  };
  const auto make_room = [&] {
    if (entries >= kMaxEntries) {
      memo.clear();
      by_node.clear();
      entries = 0;
    }
  };
  std::optional<Key> node_key;
  // Under the lock: a search inside one node is also found by the node as given next time.
  const auto remember_node = [&](const NodeGraphs& graphs) {
    if (!node_key) return;
    make_room();
    by_node.emplace(*node_key, graphs);
    ++entries;
  };
  std::optional<NodeTopology> zeroed;
  if (!options.multi_node) {
    node_key = key_of(node, options, search_nvls, search_collnet);
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = by_node.find(*node_key); it != by_node.end()) return it->second;
  }
  // A search inside one node reads no NET bandwidth (NCCL trims a single-node communicator's NETs): it runs on the
  // node with them zeroed, so that a search that did read them would show as changed graphs.
  if (!options.multi_node) zeroed = without_net_bandwidth(node);
  NodeGraphSearch search(zeroed ? *zeroed : node, options);
  const CanonicalSearchInputs inputs = search.canonical_inputs();
  const Key key = key_of(inputs, search_nvls, search_collnet);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (const NodeGraphs* g = lookup(key, inputs.values)) {
      const NodeGraphs graphs = *g;  // a copy: make_room may clear the memo
      remember_node(graphs);
      return graphs;
    }
  }
  NodeGraphs graphs = search.search(search_nvls, search_collnet);
  const NetBandwidthMoves moves = options.multi_node ? search.net_moves() : NetBandwidthMoves{};
  std::lock_guard<std::mutex> lock(mutex);
  make_room();
  memo[key].push_back(Entry{inputs.values, moves, graphs});
  ++entries;
  remember_node(graphs);
  return graphs;
}

}  // namespace trainsim
