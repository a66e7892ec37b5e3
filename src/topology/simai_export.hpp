#pragma once
// A built fabric as a SimAI topology file (`trainsim export SCENARIO --format simai-topo`; docs/topologies.md, "SimAI
// topology files"), numbered as SimAI's generators number it: GPUs 0..G-1 (rank = node), one NVSwitch per server
// right after them, then the switches tier by tier. Reading the file back (cluster.network.simai_topology) builds
// the same graph: each NIC's cables become its GPU's links, trunks one link of their summed rate, latencies the
// cables' own (cluster.network.switch_latency_ns is added again on reading). PCIe links have no place in the format
// and are left out (the reading scenario's pcie_GBps builds them again).
#include "hardware/cluster_spec.hpp"
#include "topology/network_graph.hpp"
#include "topology/simai_topology.hpp"

namespace trainsim {

// Throws ScenarioError naming the key when the format cannot describe the fabric: NICs not one per GPU
// (cluster.nics_per_node), scale-up domains other than one per server (cluster.scale_up.domain_size), a dragonfly's
// router-to-router links (cluster.network.topology). `path` is what the topology's errors will name.
SimaiTopology simai_topology_of(const NetworkGraph& graph, const ClusterSpec& cluster, const std::string& path);

// The GPU type SimAI's header carries: the catalog id up to its first '-' ("H100-SXM" -> "H100"), as SimAI's own
// files write A100, H100, H800.
std::string simai_gpu_type(const std::string& gpu_name);

}  // namespace trainsim
