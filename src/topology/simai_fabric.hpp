#pragma once
// A SimAI topology file given meaning (docs/topologies.md, "SimAI topology files"): which nodes are GPUs, NVSwitches
// and switches of which tier, what each GPU's NVLink and NIC rates are, and whether that agrees with the scenario's
// cluster block. SimAI's own reading is the reference: GPU node i is rank i, server s holds GPUs s*G..s*G+G-1 (G per
// server) and its NVSwitches are the nodes GPUS + s*K .. GPUS + s*K + K-1 (K per server), as gen_Topo_Template.py
// writes them and AstraSimNetwork.cc's node2nvswitch assumes (for K = 1); a GPU's links to switches are its NIC's
// ports; switches are tiered by their distance from the GPUs (leaves touch GPUs, spines touch leaves, cores spines).
#include <cstdint>
#include <string>
#include <vector>

#include "hardware/cluster_spec.hpp"
#include "topology/simai_topology.hpp"

namespace trainsim {

struct SimaiFabric {
  SimaiTopology file;
  int gpus = 0, servers = 0, nvswitches_per_server = 0;
  std::int64_t nvlink_bps = 0;        // one GPU's NVLink bandwidth, each direction: the sum of its NVSwitch links
  std::int64_t nic_bps = 0;           // one GPU's NIC: the sum of its links to switches; 0 when no GPU has one
  int nvlink_line = 0, nic_line = 0;  // a line stating each (the first GPU's link), named in errors
  // Per switch of the file (index = node id - the first switch id, switch ids being the last of the nodes): its tier
  // (0 leaf, 1 spine, 2 core).
  std::vector<int> switch_tier;
  int first_switch_id() const { return gpus + servers * nvswitches_per_server; }
};

// Checks what the text alone cannot: links join a GPU to an NVSwitch of its own server or to a switch, or two
// switches of adjacent tiers; every GPU reaches its server's NVSwitches, all GPUs have the same NVLink and NIC
// rates, every GPU can reach every other (over NVLink inside a server, over switches between servers), every switch
// serves some GPU, at most three tiers, no packet loss (error rate 0). Throws Error "FILE:LINE: what".
SimaiFabric interpret_simai_topology(SimaiTopology file);
SimaiFabric read_simai_fabric(const std::string& path);

// Each fact the cluster block also states must agree with the file: cluster.num_gpus, gpus_per_node, nics_per_node
// (one NIC per GPU), nic_gbps, scale_up.bandwidth_GBps, scale_up.domain_size (a server), and cluster.gpu when the
// file's GPU type names a catalog GPU (A100 matches A100-SXM-40GB). Throws ScenarioError with the key and
// "FILE:LINE: what" (file left empty: the caller adds the scenario's).
void check_cluster_matches(const SimaiFabric& fabric, const ClusterSpec& cluster);

}  // namespace trainsim
