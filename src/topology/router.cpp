#include "topology/router.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace trainsim {

namespace {

// SplitMix64 (Steele, Lea, Flood 2014): a cheap, well-mixed 64-bit hash step.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// The ECMP hash of one hop of one flow: a switch hashes the flow's header fields; the hop number
// stands for the switch's own hash seed, so successive hops choose independently.
std::uint64_t ecmp_hash(std::uint64_t seed, std::uint64_t flow_key, int hop) {
  return splitmix64(splitmix64(seed ^ (0xA0761D6478BD642FULL * static_cast<std::uint64_t>(hop + 1))) ^ flow_key);
}

bool close(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max({1.0, std::abs(a), std::abs(b)}); }

}  // namespace

Router::Router(const NetworkGraph& graph, std::uint64_t seed)
    : graph_(graph), seed_(seed), version_(graph.version()), switches_(graph.switch_count()) {
  nic_class_.assign(static_cast<std::size_t>(graph.nic_count()), -1);
  for (NodeId n = 0; n < graph.node_count(); ++n)
    max_degree_ = std::max(max_degree_, graph.out_links(n).size() + graph.in_links(n).size());
  index_switch_targets();
}

void Router::index_switch_targets() {
  const NodeId base = graph_.first_switch();
  switch_target_.resize(static_cast<std::size_t>(graph_.link_count()));
  for (LinkId l = 0; l < graph_.link_count(); ++l) {
    const Link& link = graph_.link(l);
    switch_target_[static_cast<std::size_t>(l)] = link.up && graph_.is_switch(link.to) ? link.to - base : -1;
  }
  // The switches each switch hears from over an up link, packed (CSR): the backwards search of
  // distances_to scans them as arrays, once per destination leaf (2,048 leaves × 650 K links on a
  // 131,072-GPU fabric).
  switch_in_begin_.assign(static_cast<std::size_t>(switches_) + 1, 0);
  switch_in_from_.clear();
  for (int u = 0; u < switches_; ++u) {
    for (LinkId l : graph_.in_links(base + u)) {
      const Link& link = graph_.link(l);
      if (link.up && graph_.is_switch(link.from)) switch_in_from_.push_back(link.from - base);
    }
    switch_in_begin_[static_cast<std::size_t>(u) + 1] = static_cast<std::int32_t>(switch_in_from_.size());
  }
}

LinkId* Router::buffer(int distance) {
  if (hop_buffers_.size() <= static_cast<std::size_t>(distance))
    hop_buffers_.resize(static_cast<std::size_t>(distance) + 1);
  auto& b = hop_buffers_[static_cast<std::size_t>(distance)];
  if (b.size() < max_degree_) b.resize(max_degree_);
  return b.data();
}

void Router::check_version() {
  if (version_ == graph_.version()) return;
  version_ = graph_.version();
  class_of_attachment_.clear();
  class_distances_.clear();
  std::fill(nic_class_.begin(), nic_class_.end(), -1);
  index_switch_targets();
}

const std::uint8_t* Router::distances_to(NodeId dst_nic) {
  const auto nic_index = static_cast<std::size_t>(graph_.node(dst_nic).index);
  if (nic_class_[nic_index] >= 0) return class_distances_[static_cast<std::size_t>(nic_class_[nic_index])].data();

  std::vector<NodeId> attachment;
  for (LinkId l : graph_.in_links(dst_nic)) {
    const Link& link = graph_.link(l);
    if (link.up && graph_.is_switch(link.from)) attachment.push_back(link.from);
  }
  std::sort(attachment.begin(), attachment.end());
  const auto [it, fresh] = class_of_attachment_.emplace(attachment, static_cast<int>(class_distances_.size()));
  nic_class_[nic_index] = it->second;
  if (!fresh) return class_distances_[static_cast<std::size_t>(it->second)].data();

  // Breadth-first search backwards over up links, through switches only (NICs and GPUs are
  // never transit), from the switches the NIC hangs off.
  std::vector<std::uint8_t> dist(static_cast<std::size_t>(switches_), kUnreachable);
  const NodeId base = graph_.first_switch();
  bfs_queue_.clear();
  for (NodeId s : attachment) {
    dist[static_cast<std::size_t>(s - base)] = 1;
    bfs_queue_.push_back(s);
  }
  for (std::size_t head = 0; head < bfs_queue_.size(); ++head) {
    const auto u = static_cast<std::size_t>(bfs_queue_[head] - base);
    const std::uint8_t du = dist[u];
    if (du + 1 >= kUnreachable) continue;
    const auto from = static_cast<std::size_t>(switch_in_begin_[u]),
               to = static_cast<std::size_t>(switch_in_begin_[u + 1]);
    for (std::size_t k = from; k < to; ++k) {
      const std::int32_t v = switch_in_from_[k];
      std::uint8_t& dv = dist[static_cast<std::size_t>(v)];
      if (dv != kUnreachable) continue;
      dv = static_cast<std::uint8_t>(du + 1);
      bfs_queue_.push_back(base + v);
    }
  }
  class_distances_.push_back(std::move(dist));
  return class_distances_.back().data();
}

int Router::source_distance(NodeId src_nic, const std::uint8_t* dist) const {
  int best = kUnreachable;
  const NodeId base = graph_.first_switch();
  for (LinkId l : graph_.out_links(src_nic)) {
    const Link& link = graph_.link(l);
    if (link.up && graph_.is_switch(link.to)) best = std::min(best, dist[link.to - base] + 1);
  }
  return best >= kUnreachable ? kUnreachable : best;
}

int Router::next_hops(NodeId at, int at_distance, NodeId dst_nic, const std::uint8_t* dist, LinkId* out) const {
  int count = 0;
  if (at_distance == 1) {  // the last hop: look from the NIC's side (a crossbar has 100K out-links)
    for (LinkId l : graph_.in_links(dst_nic)) {
      const Link& link = graph_.link(l);
      if (link.up && link.from == at) out[count++] = l;
    }
    return count;
  }
  for (LinkId l : graph_.out_links(at)) {
    const std::int32_t t = switch_target_[static_cast<std::size_t>(l)];
    if (t >= 0 && dist[t] == at_distance - 1) out[count++] = l;
  }
  return count;
}

void Router::no_path(NicAddress src, NicAddress dst) const {
  throw Error("no network path from " + graph_.node_name(nic_node(src)) + " to " + graph_.node_name(nic_node(dst)) +
              ": every route crosses a link that is down");
}

int Router::hop_count(NicAddress src, NicAddress dst) {
  const NodeId s = nic_node(src), d = nic_node(dst);
  if (s == d) return 0;
  check_version();
  const int hops = source_distance(s, distances_to(d));
  return hops == kUnreachable ? -1 : hops;
}

std::vector<LinkId> Router::ecmp_path(NicAddress src, NicAddress dst, std::uint64_t flow_key) {
  std::vector<LinkId> out;
  ecmp_path(src, dst, flow_key, out);
  return out;
}

void Router::ecmp_path(NicAddress src, NicAddress dst, std::uint64_t flow_key, std::vector<LinkId>& out) {
  out.clear();
  const NodeId s = nic_node(src), d = nic_node(dst);
  if (s == d) return;
  check_version();
  const std::uint8_t* dist = distances_to(d);
  int distance = source_distance(s, dist);
  if (distance == kUnreachable) no_path(src, dst);
  LinkId* candidates = buffer(0);
  NodeId at = s;
  for (int hop = 0; distance > 0; ++hop, --distance) {
    const int n = next_hops(at, distance, d, dist, candidates);
    const LinkId chosen = candidates[ecmp_hash(seed_, flow_key, hop) % static_cast<std::uint64_t>(n)];
    out.push_back(chosen);
    at = graph_.link(chosen).to;
  }
}

std::vector<LinkId> Router::adaptive_path(NicAddress src, NicAddress dst, std::span<const double> link_load,
                                          std::uint64_t flow_key) {
  std::vector<LinkId> out;
  adaptive_path(src, dst, link_load, flow_key, out);
  return out;
}

void Router::adaptive_path(NicAddress src, NicAddress dst, std::span<const double> link_load, std::uint64_t flow_key,
                           std::vector<LinkId>& out) {
  out.clear();
  if (link_load.size() != static_cast<std::size_t>(graph_.link_count()))
    throw Error("adaptive routing needs one load per link (" + std::to_string(graph_.link_count()) + "), got " +
                std::to_string(link_load.size()));
  const NodeId s = nic_node(src), d = nic_node(dst);
  if (s == d) return;
  check_version();
  const std::uint8_t* dist = distances_to(d);
  const int start = source_distance(s, dist);
  if (start == kUnreachable) no_path(src, dst);
  if (best_stamp_.size() != static_cast<std::size_t>(switches_)) {
    best_stamp_.assign(static_cast<std::size_t>(switches_), 0);
    best_max_.assign(static_cast<std::size_t>(switches_), 0);
    best_sum_.assign(static_cast<std::size_t>(switches_), 0);
  }
  if (++stamp_ == 0) {  // wrapped: old stamps could collide
    std::fill(best_stamp_.begin(), best_stamp_.end(), 0);
    stamp_ = 1;
  }
  const NodeId base = graph_.first_switch();
  auto utilisation = [&](LinkId l) { return link_load[static_cast<std::size_t>(l)] / graph_.link(l).capacity_Bps; };
  // Best (bottleneck, sum) from a switch at `distance` to the destination, memoised per call.
  auto best = [&](auto&& self, NodeId at, int distance, double& out_max, double& out_sum) -> void {
    const auto i = static_cast<std::size_t>(at - base);
    if (best_stamp_[i] == stamp_) {
      out_max = best_max_[i];
      out_sum = best_sum_[i];
      return;
    }
    LinkId* options = buffer(distance);
    const int n = next_hops(at, distance, d, dist, options);
    double m_best = 0, s_best = 0;
    for (int k = 0; k < n; ++k) {
      const LinkId l = options[k];
      double m = 0, sum = 0;
      if (distance > 1) self(self, graph_.link(l).to, distance - 1, m, sum);
      const double u = utilisation(l);
      m = std::max(m, u);
      sum += u;
      if (k == 0 || m < m_best || (close(m, m_best) && sum < s_best)) {
        m_best = m;
        s_best = sum;
      }
    }
    best_stamp_[i] = stamp_;
    best_max_[i] = out_max = m_best;
    best_sum_[i] = out_sum = s_best;
  };

  // The walk keeps its candidates in buffer(start + 1): the memoised search below only uses
  // buffers 1..distance-1.
  LinkId* options = buffer(start + 1);
  NodeId at = s;
  for (int hop = 0, distance = start; distance > 0; ++hop, --distance) {
    const auto n = static_cast<std::size_t>(next_hops(at, distance, d, dist, options));
    ms_.resize(n);
    sums_.resize(n);
    double m_best = 0, s_best = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const LinkId l = options[k];
      double m = 0, sum = 0;
      if (distance > 1) best(best, graph_.link(l).to, distance - 1, m, sum);
      const double u = utilisation(l);
      ms_[k] = std::max(m, u);
      sums_[k] = sum + u;
      if (k == 0 || ms_[k] < m_best || (close(ms_[k], m_best) && sums_[k] < s_best)) {
        m_best = ms_[k];
        s_best = sums_[k];
      }
    }
    std::size_t tied = 0;
    for (std::size_t k = 0; k < n; ++k)
      if (close(ms_[k], m_best) && close(sums_[k], s_best)) options[tied++] = options[k];  // in place: k >= tied
    const LinkId chosen = options[ecmp_hash(seed_, flow_key, hop) % static_cast<std::uint64_t>(tied)];
    out.push_back(chosen);
    at = graph_.link(chosen).to;
  }
}

std::vector<LinkId> Router::scale_up_path(int src_rank, int dst_rank) const {
  const LinkId up = graph_.scale_up_link(src_rank);
  const LinkId down = NetworkGraph::reverse(graph_.scale_up_link(dst_rank));
  if (src_rank == dst_rank) return {};
  if (graph_.link(up).to != graph_.link(down).from)
    throw Error("gpu" + std::to_string(src_rank) + " and gpu" + std::to_string(dst_rank) +
                " are in different scale-up domains (" + graph_.node_name(graph_.link(up).to) + ", " +
                graph_.node_name(graph_.link(down).from) + ")");
  if (!graph_.link(up).up || !graph_.link(down).up)
    throw Error("no scale-up path from gpu" + std::to_string(src_rank) + " to gpu" + std::to_string(dst_rank) +
                ": a link to " + graph_.node_name(graph_.link(up).to) + " is down");
  return {up, down};
}

LinkId Router::gpu_to_nic(int rank, int nic) const {
  const NodeId gpu = graph_.gpu(rank);
  const NodeId target = graph_.nic(rank / graph_.gpus_per_node(), nic);
  for (LinkId l : graph_.out_links(gpu)) {
    const Link& link = graph_.link(l);
    if (link.to != target) continue;
    if (!link.up || !graph_.link(NetworkGraph::reverse(l)).up)
      throw Error("the PCIe link between " + graph_.node_name(gpu) + " and " + graph_.node_name(target) + " is down");
    return l;
  }
  std::string local;
  for (int k : graph_.local_nics(rank)) local += (local.empty() ? "" : ", ") + std::to_string(k);
  throw Error(graph_.node_name(target) + " is not on the PCIe switch of " + graph_.node_name(gpu) +
              "; its local NICs are " + local);
}

}  // namespace trainsim
