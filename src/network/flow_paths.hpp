#pragma once
// Where a collective's flow goes in the cluster's network graph (docs/network-model.md, "Paths"):
// the collective layer names endpoints (communicator ranks, a node's NVSwitch, the fabric's
// in-network reduction) and NICs; this turns them into link ids.
//   NVLink / PCIe between GPUs: GPU -> scale-up switch -> GPU.
//   NVLink-SHARP: GPU <-> its scale-up switch.
//   Network: [GPU -> scale-up -> PXN relay GPU] -> PCIe -> NIC -> fabric (ECMP or adaptive) -> NIC
//     -> PCIe -> GPU. A NIC that is not local to the GPU is reached through its local GPU over the
//     scale-up fabric (what NCCL's PXN does); a NIC that is down is replaced by the next working NIC
//     of the same host, reached the same way (NCCL moves its channels to the NICs it still sees).
//   The fabric's in-network reduction (CollNet) and reduction servers: the NIC's first hop into the
//     fabric (the switches' aggregation itself is not a link).
#include <cstdint>
#include <span>
#include <vector>

#include "collective/flows/flow_dag.hpp"
#include "hardware/cluster_spec.hpp"
#include "topology/router.hpp"

namespace trainsim {

class FlowPaths {
 public:
  FlowPaths(const ClusterSpec& cluster, Router& router, bool adaptive);

  // Appends the links of `flow` (endpoints in communicator ranks of `members`, the global ranks
  // numbered node by node) to `out`. `link_load` is the current load per link for adaptive routing.
  void append(const Flow& flow, std::span<const int> members, std::uint64_t flow_key, std::span<const double> link_load,
              std::vector<LinkId>& out);

 private:
  struct NicRef {
    int host = 0, nic = 0;
  };
  NicRef nic_of(int rank, int net) const;  // NCCL's net index on the rank's NCCL node -> host NIC
  NicRef working_nic(NicRef want) const;   // itself, or the next NIC of the host that is up
  void gpu_to_nic(int rank, NicRef nic, std::vector<LinkId>& out) const;
  void nic_to_gpu(NicRef nic, int rank, std::vector<LinkId>& out) const;
  void scale_up(int src, int dst, std::vector<LinkId>& out) const;
  bool nic_up(NicRef nic) const;
  LinkId nic_uplink(NicRef nic) const;

  ClusterSpec cluster_;
  Router& router_;
  const NetworkGraph& graph_;
  bool adaptive_;
  std::vector<LinkId> scratch_;
};

}  // namespace trainsim
