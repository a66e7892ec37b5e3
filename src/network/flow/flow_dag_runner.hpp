#pragma once
// Runs a generic DAG of transfers on a FlowNetwork: what tests, benchmarks and collective-level
// checks execute (the collective layer's FlowDag is mapped onto this by the caller, who knows the
// topology and routing). A transfer becomes ready when every transfer it depends on has finished,
// waits its latency (propagation along its path plus fixed software latency), then transmits its
// bytes over its path, sharing links max-min fairly with whatever else is in flight.
#include <cstdint>
#include <span>
#include <vector>

#include "core/time.hpp"
#include "network/flow/flow_network.hpp"
#include "network/network_types.hpp"

namespace trainsim {

struct DagTransfer {
  std::uint32_t path_begin = 0, path_end = 0;  // its links: TransferDag::path_links[path_begin..path_end)
  std::int64_t bytes = 0;
  SimTime latency = 0;  // from ready to the first byte on the wire
  double rate_cap_Bps = kUnlimitedRate;
  std::uint32_t dep_begin = 0, dep_end = 0;  // TransferDag::dep_index[dep_begin..dep_end), each an earlier transfer
};

// Transfers with paths and dependencies in CSR form (like collective/flows/flow_dag.hpp).
struct TransferDag {
  std::vector<DagTransfer> transfers;
  std::vector<LinkId> path_links;
  std::vector<std::uint32_t> dep_index;

  // Appends a transfer and returns its index.
  std::uint32_t add(std::span<const LinkId> path, std::int64_t bytes, SimTime latency,
                    std::span<const std::uint32_t> deps = {}, double rate_cap_Bps = kUnlimitedRate);
  std::size_t size() const { return transfers.size(); }
};

// A link's capacity changes at `time` (a fault: 0 = down; a repair: back up).
struct CapacityChange {
  SimTime time = 0;
  LinkId link = 0;
  double capacity_Bps = 0;
};

// By transfer index; absolute times on the network's clock.
struct DagSchedule {
  std::vector<SimTime> ready;   // last dependency finished (or the run's start)
  std::vector<SimTime> start;   // ready + latency: first byte
  std::vector<SimTime> finish;  // last byte
  SimTime makespan = 0;         // latest finish minus the network's time when the run began
};

// Runs `dag` from network.now() until every transfer has finished. Capacity changes apply at their
// times (in time order, ties in the given order); at one instant, flows finishing at it are done
// first, then capacity changes, then transfers starting at it. Changes after the last finish are
// not applied. Flows already in the network are background traffic: they compete but are not
// waited for. Throws Error on malformed input (naming the transfer), DeadlockError when
// transfers can never finish because links on their paths stay down.
DagSchedule run_flow_dag(FlowNetwork& network, const TransferDag& dag,
                         std::span<const CapacityChange> capacity_changes = {});

}  // namespace trainsim
