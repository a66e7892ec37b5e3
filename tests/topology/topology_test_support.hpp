#pragma once
// Clusters for the topology tests, built by hand (the topology layer does not read scenarios).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "hardware/cluster_spec.hpp"
#include "topology/generate.hpp"
#include "topology/network_graph.hpp"

namespace trainsim::test {

// num_gpus GPUs, `gpn` per node, `nics` 400 Gb/s NICs per node (50 GB/s), 450 GB/s scale-up per
// GPU in one-node domains, and the given fabric.
inline ClusterSpec cluster(int num_gpus, NetworkTopology topology, int tiers = 2, int radix = 64, int gpn = 8,
                           int nics = 8) {
  ClusterSpec c;
  c.gpu.name = "test";
  c.num_gpus = num_gpus;
  c.gpus_per_node = gpn;
  c.nics_per_node = nics;
  c.nic_gbps = 400;
  c.scale_up.bandwidth_GBps = 450;
  c.scale_up.domain_size = gpn;
  c.network.topology = topology;
  c.network.tiers = tiers;
  c.network.switch_radix = radix;
  return c;
}

inline constexpr double kPortBps = 50e9;  // 400 Gb/s

inline int count_links(const NetworkGraph& g, LinkKind kind) {
  int n = 0;
  for (const Link& l : g.links()) n += l.kind == kind ? 1 : 0;
  return n;
}

inline double total_capacity(const NetworkGraph& g, LinkKind kind) {
  double total = 0;
  for (const Link& l : g.links())
    if (l.kind == kind) total += l.capacity_Bps;
  return total;
}

inline double derived(const NetworkGraph& g, const std::string& name) {
  for (const auto& d : g.derived())
    if (d.name == name) return d.value;
  ADD_FAILURE() << "no derived parameter " << name;
  return -1;
}

// The ScenarioError build_network throws (its key and message), or thrown == false.
struct BuildError {
  bool thrown = false;
  std::string key, what;
};
inline BuildError build_error(const ClusterSpec& c) {
  BuildError e;
  try {
    build_network(c);
  } catch (const ScenarioError& err) {
    e.thrown = true;
    e.key = err.key();
    e.what = err.what();
  }
  return e;
}

}  // namespace trainsim::test
