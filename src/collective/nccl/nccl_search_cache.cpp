#include "collective/nccl/nccl_search_cache.hpp"

#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

namespace trainsim {

namespace {

// Everything the graph search reads, written out in full ({:a}: doubles exactly). A field left out here
// would let two different nodes share an answer, so this lists every field of the vertices, links and paths.
std::string describe(const NodeTopology& node, const SearchOptions& options, bool nvls, bool collnet) {
  std::string s;
  auto out = std::back_inserter(s);
  fmt::format_to(out, "opt {} {} {} {} {} {}\n", options.cross_nic, options.multi_node, options.min_channels,
                 options.max_channels, nvls, collnet);
  fmt::format_to(out, "node {} {} {} {}\n", node.sm, static_cast<int>(node.arch), static_cast<int>(node.vendor),
                 node.nvswitch);
  for (int g : node.gpus) fmt::format_to(out, "g{} ", g);
  for (int n : node.nets) fmt::format_to(out, "n{} ", n);
  for (int c : node.cpus) fmt::format_to(out, "c{} ", c);
  s += '\n';
  for (const TopoVertex& v : node.vertices) {
    fmt::format_to(out, "v {} {} {} {} {} {} {:a} {:a} {} {} {} {} {} {} {:a}|", static_cast<int>(v.kind), v.id, v.dev,
                   v.rank, v.sm, v.gdr, v.net_bw, v.latency_us, v.guid, v.port, v.rail, v.plane,
                   static_cast<int>(v.arch), static_cast<int>(v.vendor), v.inter_socket_bw);
    for (const TopoLink& l : v.links) fmt::format_to(out, " {}:{}:{:a}", l.to, static_cast<int>(l.type), l.bw);
    s += '\n';
  }
  for (const auto& row : node.paths) {
    for (const TopoPath& p : row) {
      fmt::format_to(out, "{}:{:a}", static_cast<int>(p.type), p.bw);
      for (const auto& [from, link] : p.links) fmt::format_to(out, ",{}.{}", from, link);
      s += ' ';
    }
    s += '\n';
  }
  return s;
}

// The memo's key: the description's length and two independent 64-bit hashes of it (std::hash and FNV-1a),
// so that the descriptions (up to megabytes for a 72-GPU domain) need not be kept.
using Key = std::tuple<std::size_t, std::uint64_t, std::uint64_t>;

Key key_of(const std::string& text) {
  std::uint64_t fnv = 1469598103934665603ULL;
  for (const char c : text) {
    fnv ^= static_cast<unsigned char>(c);
    fnv *= 1099511628211ULL;
  }
  return {text.size(), static_cast<std::uint64_t>(std::hash<std::string_view>{}(text)), fnv};
}

// Enough for every group shape of many jobs; past it the memo starts again rather than grow without bound.
constexpr std::size_t kMaxEntries = 4096;

}  // namespace

NodeGraphs cached_search_node_graphs(const NodeTopology& node, const SearchOptions& options, bool search_nvls,
                                     bool search_collnet) {
  static std::mutex mutex;
  static std::map<Key, NodeGraphs> memo;
  const Key key = key_of(describe(node, options, search_nvls, search_collnet));
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  NodeGraphs graphs = search_node_graphs(node, options, search_nvls, search_collnet);
  std::lock_guard<std::mutex> lock(mutex);
  if (memo.size() >= kMaxEntries) memo.clear();
  memo.emplace(key, graphs);
  return graphs;
}

}  // namespace trainsim
