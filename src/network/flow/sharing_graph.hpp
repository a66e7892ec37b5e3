#pragma once
// Which active flows cross which links: the bipartite flow-link graph on which max-min sharing is
// solved (docs/network-model.md). Max-min rates decompose over the connected components of this
// graph, so a change (a flow starting or ending, a capacity change) only needs the components of
// the links it touches to be re-solved; `collect_components` finds them.
//
// Storage is pooled so the event loop does not allocate once warmed up: paths live in one arena of
// hops with a free list per path length (routes have a handful of lengths), each link keeps a dense
// list of the flows crossing it (swap-remove, each hop remembers its position there).
#include <cstdint>
#include <span>
#include <vector>

#include "network/network_types.hpp"

namespace trainsim {

// One flow on one link's list; `hop` is the link's position on the flow's path. `weight`: the bytes the
// flow puts on this link per byte it moves (1 for a plain flow; a coflow's links carry its parts'
// bytes, FlowNetwork::start), kept beside the entry because the solver's link loops read it.
struct LinkEntry {
  FlowId flow;
  std::uint32_t hop;
  float weight;
};

// One link on a flow's path; `entry` is the flow's position in that link's list.
struct PathHop {
  LinkId link;
  std::uint32_t entry;
  float weight;
};

class SharingGraph {
 public:
  explicit SharingGraph(std::size_t num_links);

  std::size_t num_links() const { return links_.size(); }

  // Places flow slot `flow` on `path` (already validated: known links, no link twice) with the weight of
  // each hop (empty: every hop 1; else validated, one per hop).
  void add(FlowId flow, std::span<const LinkId> path, std::span<const float> weights = {});
  // Takes the flow off its links and returns its hops to the pool.
  void remove(FlowId flow);

  std::span<const PathHop> path(FlowId flow) const {
    const FlowNode& n = flows_[static_cast<std::size_t>(flow)];
    return {hops_.data() + n.begin, n.count};
  }
  std::span<const LinkEntry> flows_on(LinkId link) const { return links_[static_cast<std::size_t>(link)].entries; }

  // Appends to `links` and `flows` every link and flow connected (through shared links) to one of
  // the `seeds`, each once, in discovery order (deterministic: it follows the lists' order).
  // Flows with rate[flow] < floor are left out and not walked through (their rates are known to
  // stay as they are); the links of every flow taken are all in `links`.
  void collect_components(std::span<const LinkId> seeds, std::span<const double> rate, double floor,
                          std::vector<LinkId>& links, std::vector<FlowId>& flows);

 private:
  // What the component search touches per link and per flow sits together: one cache miss each.
  struct LinkNode {
    std::vector<LinkEntry> entries;  // the flows crossing the link
    std::uint32_t seen = 0;          // epoch stamp of the component search
  };
  struct FlowNode {
    std::uint32_t begin = 0, count = 0;  // its hops: hops_[begin, begin + count)
    std::uint32_t seen = 0;
  };
  std::uint32_t allocate_hops(std::uint32_t count);
  void next_epoch();

  std::vector<PathHop> hops_;                            // arena of all paths
  std::vector<std::vector<std::uint32_t>> free_blocks_;  // by path length: freed arena offsets
  std::vector<FlowNode> flows_;                          // by flow slot
  std::vector<LinkNode> links_;                          // by link
  std::uint32_t epoch_ = 0;
};

}  // namespace trainsim
