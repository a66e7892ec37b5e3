#pragma once
// Helpers for the custom-algorithm tests: hand-built communicators (ranks numbered node by node),
// per-rank byte tallies and DAG sanity checks computed here, independently of FlowDag's members.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "collective/algorithms/custom_algorithms.hpp"
#include "collective/flows/flow_dag.hpp"
#include "collective/nccl/nccl_communicator.hpp"

namespace trainsim::testing {

// The stub links the custom-algorithm tests price on: NVLink 300 GB/s and 3 us, the network 50 GB/s (400 Gb/s
// per GPU) and 10 us.
inline constexpr double kIntraBw = 300, kNetBw = 50, kIntraLat = 3, kNetLat = 10;

// A context of `nnodes` x `ppn` ranks on those links, with no NCCL model behind it.
inline CustomAlgoContext custom_context(int nnodes, int ppn) {
  CustomAlgoContext ctx;
  ctx.nranks = nnodes * ppn;
  ctx.nnodes = nnodes;
  ctx.ppn = ppn;
  ctx.intra_bw_GBps = kIntraBw;
  ctx.net_bw_GBps = kNetBw;
  ctx.intra_lat_us = kIntraLat;
  ctx.net_lat_us = kNetLat;
  return ctx;
}

// `nics` > 0 attaches a node topology with that many NICs per node (no paths: intra links default
// to NVLink); 0 leaves node_topology empty (one NIC per GPU).
inline NcclCommunicator custom_comm(int nnodes, int ppn, int nics = 0) {
  NcclCommunicator c;
  c.nranks = nnodes * ppn;
  c.nnodes = nnodes;
  c.node_ranks.resize(static_cast<std::size_t>(nnodes));
  for (int r = 0; r < c.nranks; ++r) {
    c.node_of.push_back(r / ppn);
    c.local_of.push_back(r % ppn);
    c.node_ranks[static_cast<std::size_t>(r / ppn)].push_back(r);
  }
  if (nics > 0) {
    auto topo = std::make_shared<NodeTopology>();
    for (int g = 0; g < ppn; ++g) topo->gpus.push_back(g);
    for (int i = 0; i < nics; ++i) topo->nets.push_back(ppn + i);
    c.node_topology.assign(static_cast<std::size_t>(nnodes), topo);
  }
  return c;
}

struct EndpointTally {
  std::vector<std::int64_t> sent, received;
};

// Payload bytes sent and received per endpoint index of `kind`.
inline EndpointTally tally(const FlowDag& dag, FlowEndpoint::Kind kind, int count) {
  EndpointTally t{std::vector<std::int64_t>(static_cast<std::size_t>(count), 0),
                  std::vector<std::int64_t>(static_cast<std::size_t>(count), 0)};
  for (const Flow& f : dag.flows) {
    if (f.src.kind == kind) t.sent[static_cast<std::size_t>(f.src.index)] += f.payload;
    if (f.dst.kind == kind) t.received[static_cast<std::size_t>(f.dst.index)] += f.payload;
  }
  return t;
}

// Every dependency points to an earlier flow and lies inside dep_index (so the DAG is acyclic);
// wire bytes equal payload (Simple protocol).
inline void expect_well_formed(const FlowDag& dag) {
  for (std::size_t i = 0; i < dag.flows.size(); ++i) {
    const Flow& f = dag.flows[i];
    ASSERT_LE(f.dep_begin, f.dep_end);
    ASSERT_LE(f.dep_end, dag.dep_index.size());
    for (std::uint32_t d = f.dep_begin; d < f.dep_end; ++d) ASSERT_LT(dag.dep_index[d], i) << "flow " << i;
    EXPECT_EQ(f.bytes, f.payload);
    EXPECT_GT(f.bytes, 0);
    EXPECT_NE(f.src, f.dst);
  }
}

// Longest chain of dependent flows (number of flows on it).
inline int dag_depth(const FlowDag& dag) {
  std::vector<int> depth(dag.flows.size(), 1);
  int best = 0;
  for (std::size_t i = 0; i < dag.flows.size(); ++i) {
    for (std::uint32_t d = dag.flows[i].dep_begin; d < dag.flows[i].dep_end; ++d) {
      depth[i] = std::max(depth[i], depth[dag.dep_index[d]] + 1);
    }
    best = std::max(best, depth[i]);
  }
  return best;
}

}  // namespace trainsim::testing
