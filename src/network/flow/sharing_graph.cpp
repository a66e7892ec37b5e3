#include "network/flow/sharing_graph.hpp"

namespace trainsim {

SharingGraph::SharingGraph(std::size_t num_links) : links_(num_links) {}

std::uint32_t SharingGraph::allocate_hops(std::uint32_t count) {
  if (count < free_blocks_.size() && !free_blocks_[count].empty()) {
    const std::uint32_t begin = free_blocks_[count].back();
    free_blocks_[count].pop_back();
    return begin;
  }
  const auto begin = static_cast<std::uint32_t>(hops_.size());
  hops_.resize(hops_.size() + count);
  return begin;
}

void SharingGraph::add(FlowId flow, std::span<const LinkId> path, std::span<const float> weights) {
  const auto f = static_cast<std::size_t>(flow);
  if (f >= flows_.size()) flows_.resize(f + 1);
  const auto count = static_cast<std::uint32_t>(path.size());
  const std::uint32_t begin = allocate_hops(count);
  flows_[f].begin = begin;
  flows_[f].count = count;
  for (std::uint32_t h = 0; h < count; ++h) {
    auto& entries = links_[static_cast<std::size_t>(path[h])].entries;
    const float weight = weights.empty() ? 1.0F : weights[h];
    hops_[begin + h] = {path[h], static_cast<std::uint32_t>(entries.size()), weight};
    entries.push_back({flow, h, weight});
  }
}

void SharingGraph::remove(FlowId flow) {
  FlowNode& node = flows_[static_cast<std::size_t>(flow)];
  for (std::uint32_t h = 0; h < node.count; ++h) {
    const PathHop hop = hops_[node.begin + h];
    auto& entries = links_[static_cast<std::size_t>(hop.link)].entries;
    // Swap-remove: the last flow on the link takes this slot, and its hop learns the new position.
    const LinkEntry last = entries.back();
    entries[hop.entry] = last;
    hops_[flows_[static_cast<std::size_t>(last.flow)].begin + last.hop].entry = hop.entry;
    entries.pop_back();
  }
  if (node.count >= free_blocks_.size()) free_blocks_.resize(node.count + 1);
  free_blocks_[node.count].push_back(node.begin);
  node.begin = 0;
  node.count = 0;
}

void SharingGraph::next_epoch() {
  if (++epoch_ != 0) return;
  // Wrapped after 2^32 searches: old stamps could collide with new epochs, so clear them.
  for (LinkNode& l : links_) l.seen = 0;
  for (FlowNode& f : flows_) f.seen = 0;
  epoch_ = 1;
}

void SharingGraph::collect_components(std::span<const LinkId> seeds, std::span<const double> rate, double floor,
                                      std::vector<LinkId>& links, std::vector<FlowId>& flows) {
  next_epoch();
  // `links` doubles as the breadth-first queue: everything from `first` on is discovered here.
  const std::size_t first = links.size();
  for (LinkId seed : seeds) {
    std::uint32_t& seen = links_[static_cast<std::size_t>(seed)].seen;
    if (seen == epoch_) continue;
    seen = epoch_;
    links.push_back(seed);
  }
  for (std::size_t next = first; next < links.size(); ++next) {
    for (const LinkEntry& e : links_[static_cast<std::size_t>(links[next])].entries) {
      FlowNode& flow = flows_[static_cast<std::size_t>(e.flow)];
      if (flow.seen == epoch_) continue;
      flow.seen = epoch_;
      if (rate[static_cast<std::size_t>(e.flow)] < floor) continue;
      flows.push_back(e.flow);
      for (std::uint32_t h = 0; h < flow.count; ++h) {
        const LinkId l = hops_[flow.begin + h].link;
        std::uint32_t& seen = links_[static_cast<std::size_t>(l)].seen;
        if (seen == epoch_) continue;
        seen = epoch_;
        links.push_back(l);
      }
    }
  }
}

}  // namespace trainsim
