#pragma once
// The discrete-event engine: executes a Workload's rank programs over their streams, asking the
// compute model for kernel times and the collective model for collective times. Integer time
// (picoseconds), events ordered by (time, insertion sequence) so ties break the same way every run
// (EventQueue), and a jump straight to the next event.
#include <array>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "collective/collective_model.hpp"
#include "compute/compute_model.hpp"
#include "core/time.hpp"
#include "network/network_backend.hpp"
#include "workload/workload.hpp"

namespace trainsim {

struct RankTimeline {
  std::vector<SimTime> start, end;  // per op of the rank's program
};

// How a simulated rank's time from 0 to the makespan divides, summed in integer time as the engine runs (so exact
// however the instants are cut). At each instant the first that applies:
//   - a kernel runs: `compute`, or `optimizer` while only optimizer-phase kernels run;
//   - collectives run: `exposed[c]` for the lowest class c among their groups' (EngineOptions::exposed_class);
//   - its next kernel is ready and waits for the host to issue it: `host`;
//   - nothing: `idle_scheduled` until its last forward, backward or recompute kernel ends (waiting on other
//     pipeline stages, the fill included), `idle_after` past it.
inline constexpr int kExposedClasses = 8;
struct RankActivity {
  SimTime compute = 0, optimizer = 0, host = 0, idle_scheduled = 0, idle_after = 0;
  std::array<SimTime, kExposedClasses> exposed{};
};

struct SimulationOutput {
  std::vector<RankTimeline> timelines;                   // per simulated rank (Workload::ranks order)
  std::vector<KernelTiming> kernel_timings;              // per Workload::kernels entry
  std::vector<CollectiveEstimate> collective_estimates;  // per Workload::collectives entry
  std::int64_t events = 0;
  SimTime makespan = 0;  // when the last op of any rank finished
  // Per simulated rank: compute time added by collectives running beside kernels (their CTAs and HBM
  // traffic; ComputeModel::interference_slowdown). Zero when interference is off.
  std::vector<SimTime> interference;
  // Per simulated rank: when the compute stream sat idle, its next kernel ready but not yet issued by the
  // host (launch-bound), as [from, to) intervals in time order. Empty when EngineOptions::host_launch is 0.
  std::vector<std::vector<std::pair<SimTime, SimTime>>> host_waits;
  // Per simulated rank; empty unless EngineOptions::activity.
  std::vector<RankActivity> activity;
};

// What the engine works out from a workload before it runs, none of it depending on how long anything takes: per
// simulated rank, each op's successor on its stream, the ops that depend on it and how many predecessors it waits
// for, and when the host issues it; and every kernel's time from the compute model. Runs of one workload with the
// same compute model share it (a sweep's points that change only the network, a fault's fault-free baseline).
// What the engine reads of an op as it runs sits in one 20-byte record, so that starting and finishing an op read
// one record and not the workload's op beside four arrays of the plan (a third of the engine's time went there),
// in no more memory than those arrays took.
struct PlannedOp {
  std::uint32_t launches = 0;     // kernel launches the host has made once it issued this op (x host_launch: when)
  std::uint32_t stream_next = 0;  // next op on the same stream, or 0xffffffff
  std::uint32_t dep_begin = 0;    // its dependents: EngineRankPlan::dependents[dep_begin .. next op's dep_begin)
  std::uint32_t desc = 0;         // Op::desc
  std::uint16_t pending = 0;      // unmet predecessors at the start (deps + stream predecessor)
  Op::Type type = Op::Type::Compute;
  bool alone : 1 = false;      // a collective of a group with one simulated member: nobody to wait for
  bool optimizer : 1 = false;  // a kernel of the optimizer phase (RankActivity::optimizer)
  bool scheduled : 1 = false;  // a forward, backward or recompute kernel (RankActivity::idle_scheduled)
  bool host_sync : 1 = false;  // the host waits for some of its deps before issuing it (Op::host_waits)
};
static_assert(sizeof(PlannedOp) == 20, "the plan takes no more memory than its arrays did");
struct EngineRankPlan {
  std::vector<PlannedOp> ops;  // one per op of the rank's program, and one more closing the CSR
  std::vector<std::uint32_t> dependents;
  std::vector<std::uint32_t> host_syncs;  // the ops with Op::host_waits, in program order
};
struct EnginePlan {
  SimTime host_launch = 0;
  std::vector<EngineRankPlan> ranks;         // Workload::ranks order
  std::vector<KernelTiming> kernel_timings;  // per Workload::kernels entry
};
// `host_launch`: as EngineOptions::host_launch.
EnginePlan plan_engine(const Workload& wl, const ComputeModel& compute, SimTime host_launch);

// What each of the workload's collectives (Workload::collectives) takes when the analytical model times it: on its
// group's placement in the cluster, or on the slowest of the group's copies (EngineOptions::copy_placements); a
// group of one rank communicates nothing. What the engine charges each call, unless a network backend times it.
std::vector<CollectiveEstimate> estimate_collectives(const Workload& wl, const CollectiveModel& coll,
                                                     const ClusterSpec& cluster,
                                                     const std::vector<std::vector<GroupPlacement>>& copy_placements);

// How far a simulation has got, for a progress line.
struct EngineProgress {
  SimTime now = 0;             // simulated time reached
  std::int64_t events = 0;     // processed so far (engine events and network completions)
  std::int64_t ops_done = 0;   // ops finished, of
  std::int64_t ops_total = 0;  // every simulated rank's ops
};

// Optional per-rank slowdown of compute kernels (a straggler); empty = none. `network`: an
// event-driven backend that times collectives once every member has arrived (flow-level); null =
// the collective model's estimate (analytical).
// `interference`: a kernel that runs while collectives of its rank are in flight is slowed by what
// they take from the GPU (docs/compute-model.md §1.4); its remaining work is re-timed whenever a
// collective of its rank starts or ends.
// `progress`: called every `progress_every` processed events on the simulating thread; it only
// observes (the simulation and its results are the same with or without it). Empty = none.
// `host_launch`: CPU time the host takes per kernel launch (Op::launches). Each rank's host thread issues its
// ops in program order from time 0, waiting for the GPU only where an op says so (Op::host_waits: it blocks until
// those ops have finished), so op i is issued at the sum of the launch costs of the ops since the host's last
// wait, counted from when that wait ended, and starts no earlier (docs/compute-model.md §1.5). 0 = the host costs
// nothing but its waits.
struct EngineOptions {
  std::vector<double> compute_slowdown;  // by simulated-rank index
  SimTime host_launch = 0;
  // plan_engine of this workload, compute model and host_launch, made once for several runs; null = made here.
  const EnginePlan* plan = nullptr;
  NetworkBackend* network = nullptr;
  bool interference = true;
  // By group: the distinct placements of the copies of the group that run each of its calls at once; a call takes
  // as long as on the slowest (slowest_copy_estimate). Empty (or empty for a group): the group's own placement.
  std::vector<std::vector<GroupPlacement>> copy_placements;
  // estimate_collectives of this workload, collective model, cluster and copy_placements, made by the caller (who
  // looked at them first); null = made here.
  const std::vector<CollectiveEstimate>* estimates = nullptr;
  // Keep each rank's RankActivity, with `exposed_class` by group: the class of the time its collectives run with no
  // kernel beside them (RankActivity::exposed), below kExposedClasses; a lower class counts first where several
  // overlap.
  bool activity = false;
  std::vector<std::uint8_t> exposed_class;
  std::function<void(const EngineProgress&)> progress;
  std::int64_t progress_every = 1024;  // the callback throttles by wall time; this bounds its cost
};

// Throws DeadlockError naming the waiting ranks, ops and groups if the workload cannot finish, and
// Error if members of one collective disagree on its kind or size.
SimulationOutput simulate(const Workload& wl, const ComputeModel& compute, const CollectiveModel& collectives,
                          const ClusterSpec& cluster, const EngineOptions& options = {});

}  // namespace trainsim
