#pragma once
// What a run produces, as plain data: the report layer turns it into text, JSON, CSV and traces
// without knowing how it was simulated. JSON field names are fixed by the scenario spec's "Result".
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainsim {

// Seconds of the critical rank's iteration; the five spec fields sum to the iteration time.
struct Breakdown {
  double compute = 0;       // forward/backward/recompute kernels on the compute stream
  double exposed_comm = 0;  // communication the compute stream waited for (sum of the three below + other)
  double bubble = 0;        // pipeline idle time: waiting for a peer stage
  double optimizer = 0;     // optimizer step kernels, grad-norm, zeroing buffers
  double other = 0;         // the rest (host syncs, launch gaps)
  double host = 0;          // of `other`: the compute stream waiting for the host to launch its next kernel
  // Detail of exposed_comm by communicator.
  double exposed_tp = 0, exposed_cp = 0, exposed_dp = 0, exposed_pp = 0, exposed_other = 0;
  double exposed_ep = 0;  // expert parallel (MoE token dispatch/combine, expert-TP); expert-DP counts as DP
};

struct MemoryUsage {  // GiB per GPU on the worst rank
  double weights = 0, grads = 0, optimizer = 0, activations = 0, other = 0, peak = 0;
  double capacity = 0;  // the GPU's memory
  bool fits = true;
  int worst_stage = 0;
};

// One row of the per-collective table: all collectives of one kind on one communicator kind.
struct CommStat {
  std::string kind;   // "all_reduce", "all_gather", "reduce_scatter", "sendrecv", ...
  std::string group;  // "tp", "dp", "pp", "embedding", "world", ...
  int group_size = 0;
  std::int64_t count = 0;  // calls per iteration on the critical rank
  double bytes = 0;        // total bytes (NCCL nBytes) per iteration on the critical rank
  double time_s = 0;       // total time of those calls
  double exposed_s = 0;    // part of time_s the compute stream waited for
  std::string algorithm;   // of the largest call, e.g. "Ring"
  std::string protocol;    // e.g. "Simple"
  double max_call_s = 0;   // the slowest single call (flow-level runs: contention shows here)
};

struct SimulationStats {
  double wall_s = 0;
  std::int64_t events = 0;
  std::int64_t flows = 0;
  std::string network_model;  // "analytical" | "flow"
  std::int64_t simulated_ranks = 0;
  std::int64_t ops = 0;
  std::string compute_model;       // how kernels were priced: the model, its clock and curves (describe())
  double interference_s = 0;       // critical rank: compute time added by collectives running beside kernels
  double host_launch_us = 0;       // host CPU time per kernel launch (compute.host_launch_us)
  std::int64_t host_launches = 0;  // kernel and graph launches the critical rank's host makes per iteration
};

// With faults: the same job on the fault-free cluster, for the slowdown.
struct FaultImpact {
  int faults = 0;
  double fault_free_iteration_time_s = 0;
  double slowdown = 1;  // iteration_time_s / fault_free_iteration_time_s
};

// One directed link of the network graph after a flow- or packet-level run (`--links-csv`).
struct LinkUsageRow {
  std::string name;  // "node3.nic2>leaf5"
  std::string kind;  // "nic-leaf", "leaf-spine", ...
  double capacity_GBps = 0;
  double bytes = 0;
  double busy_s = 0;
  int peak_flows = 0;
  double utilisation = 0;  // bytes / (capacity × iteration time)
  // Packet-level runs (`packet` true): the link's peak egress queue, the PFC pauses that held its transmitter and
  // for how long, the ECN marks and drops at its queue.
  bool packet = false;
  double max_queue_kb = 0;
  std::int64_t pause_events = 0;
  double paused_s = 0;
  std::int64_t ecn_marks = 0, drops = 0;
};

// Packet-level runs (simulation.network_model: packet): what congestion did over the iteration.
struct CongestionLinkRow {
  std::string name, kind;
  double max_queue_kb = 0;        // peak of the link's egress queue
  std::int64_t pause_events = 0;  // PFC pauses that held its transmitter
  double paused_s = 0;            // time held
  std::int64_t ecn_marks = 0, drops = 0;
};
struct Congestion {
  std::int64_t packets = 0;  // delivered in order
  std::int64_t pause_events = 0, ecn_marks = 0, cnps = 0, rate_cuts = 0, drops = 0, retransmitted_packets = 0;
  double paused_s = 0;  // summed over the fabric's links (NVLink and PCIe use credits, not PFC)
  double fct_p50_us = 0, fct_p99_us = 0, fct_max_us = 0;  // transfers' completion times (start to last byte)
  std::int64_t transfers = 0;
  // simulation.packet_host_links: "fifo" (NVLink and PCIe queue packets as the fabric's ports do) or "delay" (crossed
  // without queueing).
  std::string host_links = "fifo";
  std::vector<CongestionLinkRow> worst_links;  // most paused, then deepest queue; at most 8
  // cluster.network.roce.switch_buffer_mb: each switch's shared buffer, the fullest one's peak and where, and the
  // packets lost past a full PFC headroom (lossless). Absent with per-port limits.
  struct SwitchBuffers {
    double size_mb = 0, peak_kb = 0;
    std::string peak_switch;
    std::int64_t headroom_drops = 0;
  };
  std::optional<SwitchBuffers> switch_buffers;
};

// `trainsim run --explain`: where the critical rank's time goes, op by op, and where each time came
// from, so a user sees which numbers an error would come from.
struct ExplainRow {
  std::string name;        // op name ("fc1", "qkv.dgrad") or collective name ("fsdp.allgather.fwd")
  std::string detail;      // kernel kind and shape, or collective kind, communicator and size
  std::int64_t count = 0;  // calls per iteration on the critical rank
  double time_s = 0;       // summed over those calls
  double share = 0;        // time_s / iteration time
  double exposed_s = 0;    // collectives: the part not hidden behind compute (ops: time_s)
  std::string source;      // ops: measured | scaled | roofline; collectives: nccl-model | flow
  // Ops: what set the kernel's speed. alone_s = the calls priced alone (time_s - alone_s is what the
  // collectives running beside them cost, interference_s); efficiency = fraction of the dense peak the
  // shape reaches (roofline tensor kernels, else 0); clock_factor = sustained / calibration clock.
  double alone_s = 0;
  double interference_s = 0;
  double efficiency = 0;
  double clock_factor = 1;
  std::string why;  // the same in words, with where each number comes from
};
struct Explanation {
  int rank = 0;                              // global rank explained (the critical rank)
  std::vector<ExplainRow> ops, collectives;  // longest first
};

// Where kernel times came from when the scenario gives an op database (compute.database).
struct ModelledKernel {
  std::string detail;      // the kernel, as kernel_detail prints it
  std::int64_t count = 0;  // ops of all simulated ranks that ran it
  double time_s = 0;       // their summed time
};
struct ComputeSources {
  std::string database, scale_from;                                 // scale_from empty: measured on cluster.gpu
  std::int64_t measured_ops = 0, scaled_ops = 0, modelled_ops = 0;  // over all simulated ranks
  std::vector<ModelledKernel> modelled;  // the roofline priced these (the database's gaps), longest first
};

// A setting the scenario left out that validation chose (scenario.hpp, InferredValue), echoed so it is not silent.
struct InferredSetting {
  std::string key, value, why;
};

// A warning about the scenario (scenario.hpp, ScenarioWarning): it ran, but likely not as the user expects.
struct ScenarioWarningNote {
  std::string key, message;
};

// What the cluster draws over one iteration (docs/run-planning.md, "Energy"): each GPU's power by what the critical
// rank does (compute, exposed communication, waiting), plus the hosts' and the network's per GPU, times the
// facility's PUE.
struct IterationEnergy {
  double gpu_compute_w = 0, gpu_communication_w = 0, gpu_idle_w = 0, gpu_average_w = 0;
  double node_overhead_w_per_gpu = 0, network_w_per_gpu = 0, pue = 1;
  std::string basis;  // where the GPU's power states come from
  double joules = 0, tokens_per_joule = 0;
};

struct RunResult {
  std::string scenario;  // name
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double tflops_per_gpu = 0;  // model FLOPs
  double mfu = 0, hfu = 0;
  Breakdown breakdown;
  std::optional<MemoryUsage> memory;
  std::vector<CommStat> comm;
  SimulationStats simulation;
  std::optional<FaultImpact> faults;
  std::vector<LinkUsageRow> hot_links;   // flow-level runs: the busiest links (by utilisation), busiest first
  std::optional<Congestion> congestion;  // packet-level runs
  int critical_rank = 0;
  std::optional<Explanation> explain;             // with --explain
  std::optional<ComputeSources> compute_sources;  // with compute.database
  std::optional<IterationEnergy> energy;          // unset when the GPU's power is not known (a warning says so)
  // Context for the text report.
  std::string model_name, gpu_name, precision;
  int num_gpus = 0, tensor = 1, pipeline = 1, data = 1, context = 1, micro_batches = 0;
  int expert = 1, expert_tensor = 0, virtual_pipeline = 1;  // expert_tensor 0: as tensor
  std::int64_t seq_length = 0, global_batch_size = 0;       // tokens per sequence, sequences per iteration (0: unknown)
  std::vector<InferredSetting> inferred;
  std::vector<ScenarioWarningNote> warnings;
  double model_flops_per_iteration = 0, hardware_flops_per_iteration = 0;
  double peak_tflops = 0;
  // A workload file run on a scenario without a model block: no tokens or FLOPs to count, so tokens/s, TFLOPS, MFU
  // and HFU are unknown (reports print "—", JSON null), and the parallel sizes are the file's when it states them
  // (an AICB header), unknown otherwise (a Chakra trace).
  bool throughput_known = true;
  bool parallelism_known = true;
};

// One span of a trace: a process per rank, a thread per stream.
struct TraceSpan {
  int pid = 0;  // global rank
  int tid = 0;  // stream index
  std::string name;
  std::string category;  // "compute", "tp", "dp", "pp", ...
  double start_us = 0, dur_us = 0;
  int layer = -1, micro_batch = -1;
};

// One sample of a fabric port's egress queue at packet level (`run --queues-csv`): the queue from `time_us` on,
// until the port's next sample.
struct QueueSampleRow {
  std::string link;  // "node0.nic3>leaf1"
  std::string kind;  // "nic-switch", "leaf-spine", ...
  double time_us = 0;
  double queue_kb = 0;
};

// An interval PFC held a fabric port's transmitter at packet level (`run --pauses-csv`).
struct PauseRow {
  std::string link;  // the paused transmitter's link: "leaf1>spine0"
  std::string kind;
  double start_us = 0, end_us = 0;  // a pause still on when the run ended ends then
  // The egress port where the most of the link's bytes waited when the PAUSE left: the next edge of the congestion
  // tree, towards its root ("spine0>leaf3"); empty when none of them waited there.
  std::string cause;
};

// A flow's sending rate at packet level from `time_us` on (`run --rates-csv`): what its congestion control allows, at
// most its NIC port's capacity; 0 from when it finished.
struct RateRow {
  std::uint64_t flow = 0;  // the flow, numbered in the order the run started them
  std::string link;        // the NIC port it leaves through: "node0.nic3>leaf1"
  double time_us = 0;
  double rate_gbps = 0;
};

// A value over time in the trace (a Perfetto counter track), e.g. a port's egress queue at packet level.
struct TraceCounter {
  std::string name;  // the track: "queue node0.nic3>leaf1"
  double ts_us = 0;
  double value = 0;  // in `unit`
  std::string unit;  // the args key: "KB"
};

}  // namespace trainsim
