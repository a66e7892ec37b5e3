#pragma once
// trainsim's public API: what the CLI (and future bindings) use. Everything else is internal.
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "report/nccl_test_result.hpp"
#include "report/result.hpp"
#include "scenario/scenario.hpp"

namespace trainsim {

// How a run is going, for a progress display. Watching changes nothing in the run or its results.
struct RunProgress {
  enum class Stage { Estimated, Simulating, Done };
  Stage stage = Stage::Estimated;
  // Estimated (once, before the first simulation): the work ahead and its wall time, roughly.
  double estimated_ops = 0, estimated_flows = 0, estimated_seconds = 0;
  // Simulating (every so many events) and Done.
  int run = 1, runs = 1;    // with faults, the fault-free baseline is run 2 of 2
  double simulated_s = 0;   // simulated time reached in this run
  std::int64_t events = 0;  // processed in this run
  double fraction = 0;      // of all runs' ops finished
};

struct RunOptions;
struct RunOutput;

// What run_scenario builds before it simulates (the memory model, the workload, the compute model), kept for the
// next run of a scenario with the same workload_fingerprint and the same options: the points of a sweep that vary
// only keys the network reads (network_only_key: cluster.nic_gbps, cluster.network.*, nccl.*, ...) build them
// once. With the analytical network model it also keeps the job's last simulations: a point that leaves every
// collective's estimate as an earlier point had it simulates the same iteration, and takes that one's output. It
// holds one job at a time; not thread-safe: one per thread (a sweep's worker keeps one).
class PreparedJobCache {
 public:
  PreparedJobCache();
  ~PreparedJobCache();
  PreparedJobCache(const PreparedJobCache&) = delete;
  PreparedJobCache& operator=(const PreparedJobCache&) = delete;
  int reused() const { return reused_; }  // runs that found their job here
  // Runs that took a simulation an earlier run of the same job had made: every collective's estimate, and so the
  // whole iteration, came out as there (analytical network model only).
  int simulations_reused() const { return simulations_reused_; }

  struct Entry;  // defined where jobs are prepared

 private:
  friend RunOutput run_scenario(const Scenario& s, const RunOptions& options);
  std::unique_ptr<Entry> entry_;
  int reused_ = 0;
  int simulations_reused_ = 0;
};

struct RunOptions {
  bool per_rank = false;         // simulate every rank (default: one per symmetric class)
  bool allow_oom = false;        // simulate even if the memory model says it does not fit
  bool want_trace = false;       // collect trace spans
  bool want_queues = false;      // packet level: every fabric port's egress queue over time (RunOutput::queues)
  bool want_pauses = false;      // packet level: every interval PFC paused a fabric port (RunOutput::pauses)
  bool want_rates = false;       // packet level: every flow's sending rate over time (RunOutput::rates)
  std::vector<int> trace_ranks;  // global ranks to trace; empty = every simulated rank
  bool explain = false;          // the critical rank's longest ops and collectives (RunResult::explain)
  std::function<void(const RunProgress&)> progress;  // called on the simulating thread; empty = none
  // A search's limit: when a simulated rank's compute kernels alone, back to back, take longer than this many
  // seconds (compute_lower_bound_s), the iteration cannot be shorter, and run_scenario throws SlowerThanLimitError
  // instead of simulating. Infinite (the default) = always simulate.
  double give_up_above_s = std::numeric_limits<double>::infinity();
  // A workload file to run instead of the workload generated from the scenario's model (`trainsim run --workload`):
  // an AICB/SimAI layer table (docs/workload-files.md) or a Chakra trace directory (docs/chakra.md); it runs on the
  // scenario's cluster. Empty = generate the workload as usual.
  std::string workload_file;
  // Where to find (and leave) what the run builds before simulating; null = build it. Runs with a workload file or
  // a trace build it every time.
  PreparedJobCache* reuse = nullptr;
  // Threads that build the job's NCCL communicators before the (sequential) event loop; the results do not depend on
  // it. 0 = the scenario's simulation.threads (0 there: all cores). Commands that run several simulations at a time
  // (sweep, tune, validate, serve) pass 1.
  int threads = 0;
};

// run_scenario stopped before simulating: its compute alone takes bound_s, more than RunOptions::give_up_above_s.
class SlowerThanLimitError : public Error {
 public:
  SlowerThanLimitError(const std::string& what, double bound_s) : Error(what), bound_s_(bound_s) {}
  double bound_s() const { return bound_s_; }

 private:
  double bound_s_;
};

struct RunOutput {
  RunResult result;
  std::vector<LinkUsageRow> links;     // flow-level runs: every link of the fabric
  std::vector<TraceSpan> trace;        // when RunOptions::want_trace
  std::vector<TraceCounter> counters;  // with the trace, packet level: the deepest egress queues, the longest pauses
  std::vector<QueueSampleRow> queues;  // RunOptions::want_queues, packet level: every port that queued, over time
  std::vector<PauseRow> pauses;        // RunOptions::want_pauses, packet level: every pause of a fabric port
  std::vector<RateRow> rates;          // RunOptions::want_rates, packet level: each flow's rate changes, in time order
  std::vector<std::string> stream_names;
  // With nccl.NCCL_DEBUG=INFO: for each distinct communicator of the job, a line naming it ("# trainsim: ...")
  // and the lines NCCL's rank 0 of it would log (NCCL's formats, message only); the CLI prints them on stderr.
  std::vector<std::string> nccl_log;
};

// Simulates one iteration of the scenario's training job. Throws Error (ScenarioError, DeadlockError)
// with a message for the user; ScenarioError before building anything when the estimated work is
// above simulation.max_ops.
RunOutput run_scenario(const Scenario& s, const RunOptions& options = {});

// The self-contained HTML page of a run (`run --html`, docs/html-report.md) from what run_scenario returned for `s`:
// every pipeline stage's memory from the memory model, the busiest links, and the critical rank's timeline when the
// run was traced (`traced`: RunOptions::want_trace was set). `scenario_path` goes into the commands the page
// suggests.
std::string run_html_page(const Scenario& s, const RunOutput& out, bool traced, const std::string& scenario_path);

// A lower bound on the iteration time, from the compute kernels alone, without simulating: the busiest simulated
// rank's compute stream runs its kernels back to back, each at least as long as alone. A search uses it to skip
// candidates that cannot beat the ones it has. Throws what run_scenario throws before it simulates (ScenarioError;
// OutOfMemoryError unless allow_oom).
double compute_lower_bound_s(const Scenario& s, bool allow_oom = false);

// `trainsim export`: writes the scenario's workload as another simulator's workload file, its compute times those
// of trainsim's simulation of the iteration. "aicb": a SimAI/AICB layer table (docs/workload-files.md); "chakra": a
// directory with one execution trace per simulated rank, every rank with per_rank (docs/chakra.md). Throws Error for
// an unknown format (naming the known ones), a job the format cannot describe, a file it cannot write, and what
// run_scenario throws.
void export_workload(const Scenario& s, const std::string& format, const std::string& path, bool per_rank = false);

// `trainsim export --format simai-topo`: the scenario's fabric (its cluster block, as built, without faults) as a
// SimAI topology file, which cluster.network.simai_topology reads back (docs/topologies.md). Throws ScenarioError
// naming the key when the format cannot describe the fabric, Error when the file cannot be written.
void export_simai_topology(const Scenario& s, const std::string& path);

// Collective benchmark scenarios (a `collective:` block): NCCL-model bus bandwidth at each point.
struct CollectivePointResult {
  std::int64_t size = 0;
  double measured_busbw_GBps = 0;
  double simulated_busbw_GBps = 0;
  double time_us = 0;
  std::string algorithm, protocol;
};
std::vector<CollectivePointResult> run_collective_benchmark(const Scenario& s);

// `trainsim nccl-test`: what nccl-tests would print for the scenario's cluster, predicted.
struct NcclTestOptions {
  CollectiveOp op = CollectiveOp::AllReduce;
  std::int64_t min_bytes = 8, max_bytes = 8;  // -b / -e
  double factor = 2;                          // -f: multiply the size by this between rows
  std::int64_t increment = 0;                 // -i: add this instead (nccl-tests: -i wins when > 0)
  std::string dtype = "float";                // -d: nccl-tests' type names
  std::string redop = "sum";                  // -o
  int root = 0;                               // -r (broadcast, reduce)
  std::optional<int> gpus;                    // --gpus: ranks in the test (default: the cluster's)
  int agg_iters = 1;                          // -m: operations per NCCL group (times stay per operation)
};
// Throws ScenarioError (key "--gpus", "-d", "-o", "-b"...) for values nccl-tests would refuse, and
// ("-f", "-i") before computing anything for steps that do not advance or that would give more than
// kMaxNcclTestRows rows. `on_row`, when given, is called after each row is added (the table so far:
// its header fields and rows), so a caller can print rows as they come.
inline constexpr std::int64_t kMaxNcclTestRows = 10000;
NcclTestTable run_nccl_test(const Scenario& s, const NcclTestOptions& options,
                            const std::function<void(const NcclTestTable&)>& on_row = {});
// Bytes per element of an nccl-tests type name; nullopt for unknown names.
std::optional<int> nccl_dtype_size(const std::string& dtype);

}  // namespace trainsim
