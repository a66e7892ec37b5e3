// The human summary of one run, laid out so that a cluster architect finds the answer (time,
// throughput, efficiency), where the time went, whether it fits, and what the network did.
#include <cmath>
#include <iterator>
#include <string>

#include <fmt/format.h>

#include "report/format_utils.hpp"
#include "report/reports.hpp"

namespace trainsim {

namespace {

using report_format::group_digits;
using report_format::human_bytes;
using report_format::human_duration;
using report_format::kUnknown;
using report_format::or_dash;
using report_format::percent;
using report_format::share_of;

using Buffer = fmt::memory_buffer;

template <typename... Args>
void line(Buffer& buf, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(buf), format, std::forward<Args>(args)...);
  buf.push_back('\n');
}

void write_header(Buffer& buf, const RunResult& r) {
  line(buf, "trainsim run: {}", or_dash(r.scenario));
  std::string gpu = or_dash(r.gpu_name);
  if (!r.precision.empty()) gpu += fmt::format(" ({})", r.precision);
  line(buf, "  model {}   gpu {}   {} GPUs", or_dash(r.model_name), gpu, r.num_gpus);
  if (r.seq_length > 0 || r.global_batch_size > 0)
    line(buf, "  sequence length {}   global batch size {}", r.seq_length, r.global_batch_size);
  if (r.parallelism_known) {
    std::string parallel = fmt::format("TP {}  PP {}  DP {}  CP {}", r.tensor, r.pipeline, r.data, r.context);
    if (r.virtual_pipeline > 1) parallel += fmt::format("  VP {}", r.virtual_pipeline);
    if (r.expert > 1 || (r.expert_tensor != 0 && r.expert_tensor != r.tensor))
      parallel += fmt::format("  EP {}  ETP {}", r.expert, r.expert_tensor);
    line(buf, "  parallelism {}   micro-batches {}", parallel, r.micro_batches);
  } else {  // a workload file that does not state them (a Chakra trace) on a scenario without a model block
    line(buf, "  parallelism TP {0}  PP {0}  DP {0}  CP {0}   micro-batches {0}", kUnknown);
  }
  // Settings the scenario left out and validation had to choose: said here, never silently.
  for (const InferredSetting& v : r.inferred) line(buf, "  chosen: {} = {}  ({})", v.key, v.value, v.why);
  for (const ScenarioWarningNote& w : r.warnings) line(buf, "  warning: {}: {}", w.key, w.message);
  buf.push_back('\n');
}

void write_headline(Buffer& buf, const RunResult& r) {
  line(buf, "  {:<20}{:.4f} s", "iteration time", r.iteration_time_s);
  if (!r.throughput_known) {  // no model block: nothing to count tokens or FLOPs with
    line(buf, "  {:<20}{} tokens/s  (no model block: tokens and FLOPs unknown)", "throughput", kUnknown);
    for (const char* name : {"TFLOPS/GPU", "MFU", "HFU"}) line(buf, "  {:<20}{}", name, kUnknown);
    buf.push_back('\n');
    return;
  }
  line(buf, "  {:<20}{} tokens/s  ({:.1f} per GPU)", "throughput", group_digits(r.tokens_per_s),
       r.tokens_per_s_per_gpu);
  if (r.peak_tflops > 0) {
    line(buf, "  {:<20}{:.1f}  (peak {:.1f})", "TFLOPS/GPU", r.tflops_per_gpu, r.peak_tflops);
  } else {
    line(buf, "  {:<20}{:.1f}", "TFLOPS/GPU", r.tflops_per_gpu);
  }
  line(buf, "  {:<20}{}", "MFU", percent(r.mfu));
  line(buf, "  {:<20}{}", "HFU", percent(r.hfu));
  if (r.energy) {
    const double j = r.energy->joules;
    const std::string amount = j >= 1e6   ? fmt::format("{:.4g} MJ", j / 1e6)
                               : j >= 1e3 ? fmt::format("{:.4g} kJ", j / 1e3)
                                          : fmt::format("{:.4g} J", j);
    line(buf, "  {:<20}{} per iteration  ({:.4g} tokens per joule; GPUs {:.0f} W on average, PUE {:.2f})", "energy",
         amount, r.energy->tokens_per_joule, r.energy->gpu_average_w, r.energy->pue);
  }
  buf.push_back('\n');
}

// Worth a line when the GPU waited on the host for at least 1% of the step (every step waits for its first
// launch, a few microseconds).
bool launch_bound(const RunResult& r) { return r.breakdown.host >= 0.01 * r.iteration_time_s && r.breakdown.host > 0; }

void write_breakdown(Buffer& buf, const RunResult& r) {
  const Breakdown& b = r.breakdown;
  const double it = r.iteration_time_s;
  constexpr int kName = 24;
  line(buf, "Breakdown (critical rank {})", r.critical_rank);
  line(buf, "  {:<{}}{:>12}{:>8}", "", kName, "seconds", "%");
  auto row = [&](const char* name, double seconds) {
    line(buf, "  {:<{}}{:>12.4f}{:>8}", name, kName, seconds, share_of(seconds, it));
  };
  row("compute", b.compute);
  row("exposed comm", b.exposed_comm);
  row("  tensor-parallel", b.exposed_tp);
  row("  context-parallel", b.exposed_cp);
  row("  data-parallel", b.exposed_dp);
  row("  pipeline p2p", b.exposed_pp);
  row("  expert-parallel", b.exposed_ep);
  row("  other", b.exposed_other);
  row("pipeline bubble", b.bubble);
  row("optimizer", b.optimizer);
  row("other", b.other);
  if (launch_bound(r)) row("  waiting on the host", b.host);
  // The five top-level parts are meant to add up to the iteration; printing the sum lets the
  // reader see at once if they do not.
  row("total", b.compute + b.exposed_comm + b.bubble + b.optimizer + b.other);
  buf.push_back('\n');
}

void write_memory(Buffer& buf, const MemoryUsage& m) {
  constexpr int kName = 24;
  line(buf, "Memory per GPU, GiB (worst stage {})", m.worst_stage);
  auto row = [&](const char* name, double gib) { line(buf, "  {:<{}}{:>12.2f}", name, kName, gib); };
  row("weights", m.weights);
  row("gradients", m.grads);
  row("optimizer states", m.optimizer);
  row("activations", m.activations);
  row("other", m.other);
  line(buf, "  {:<{}}{:>12.2f} of {:.2f}  {}", "peak", kName, m.peak, m.capacity, m.fits ? "fits" : "DOES NOT FIT");
  buf.push_back('\n');
}

void write_comm_table(Buffer& buf, const RunResult& r) {
  line(buf, "Collectives per iteration (critical rank)");
  if (r.comm.empty()) {
    line(buf, "  none");
    buf.push_back('\n');
    return;
  }
  // Column widths follow the longest entry so the table stays aligned for any names.
  std::size_t kind_w = 4, group_w = 5;
  for (const CommStat& c : r.comm) {
    kind_w = std::max(kind_w, c.kind.size());
    group_w = std::max(group_w, c.group.size());
  }
  line(buf, "  {:<{}}  {:<{}}  {:>6}  {:>8}  {:>12}  {:>11}  {:>11}  {:>10}  {}", "kind", kind_w, "group", group_w,
       "size", "count", "bytes", "time s", "exposed s", "max call", "algorithm/protocol");
  for (const CommStat& c : r.comm) {
    std::string algo = c.algorithm.empty() ? "-" : c.algorithm;
    if (!c.protocol.empty()) algo += "/" + c.protocol;
    line(buf, "  {:<{}}  {:<{}}  {:>6}  {:>8}  {:>12}  {:>11.6f}  {:>11.6f}  {:>10}  {}", c.kind, kind_w, c.group,
         group_w, c.group_size, c.count, human_bytes(c.bytes), c.time_s, c.exposed_s, human_duration(c.max_call_s),
         algo);
  }
  buf.push_back('\n');
}

// With an op database: how many ops each source priced, and the kernels the database lacked.
void write_compute_sources(Buffer& buf, const ComputeSources& c) {
  line(buf, "Compute times: op database {}{}", c.database,
       c.scale_from.empty() ? "" : " (measured on " + c.scale_from + ", scaled)");
  line(buf, "  ops measured {}, scaled {}, modelled (roofline) {}", c.measured_ops, c.scaled_ops, c.modelled_ops);
  constexpr std::size_t kShown = 10;
  if (!c.modelled.empty()) {
    line(buf, "  modelled kernels, longest first{}:",
         c.modelled.size() > kShown ? fmt::format(" ({} of {})", kShown, c.modelled.size()) : "");
    for (std::size_t i = 0; i < c.modelled.size() && i < kShown; ++i)
      line(buf, "    {:>10.4f} s  {:>7} ops  {}", c.modelled[i].time_s, c.modelled[i].count, c.modelled[i].detail);
  }
  buf.push_back('\n');
}

// --explain: the longest ops and collectives of the critical rank and where each time came from.
void write_explain(Buffer& buf, const Explanation& e) {
  auto table = [&](const char* title, const std::vector<ExplainRow>& rows, bool collectives) {
    line(buf, "{} (rank {}, longest first)", title, e.rank);
    std::size_t name_w = 4;
    for (const ExplainRow& x : rows) name_w = std::max(name_w, x.name.size());
    line(buf, "  {:<{}}  {:>7}  {:>10}  {:>7}  {}{:<10}  {}", "name", name_w, "count", "time s", "share",
         collectives ? "exposed s   " : "", "source", "what");
    for (const ExplainRow& x : rows) {
      line(buf, "  {:<{}}  {:>7}  {:>10.4f}  {:>6.1f}%  {}{:<10}  {}", x.name, name_w, x.count, x.time_s, 100 * x.share,
           collectives ? fmt::format("{:>9.4f}   ", x.exposed_s) : "", x.source, x.detail);
      if (!x.why.empty()) line(buf, "  {:<{}}  {}", "", name_w + 41, x.why);
    }
    buf.push_back('\n');
  };
  table("Longest ops", e.ops, false);
  table("Longest collectives", e.collectives, true);
}

void write_faults(Buffer& buf, const FaultImpact& f) {
  line(buf,
       "Faults: {} injected; fault-free iteration {:.4f} s; this run is {:.1f}% slower ({:.1f}% of fault-free "
       "throughput)",
       f.faults, f.fault_free_iteration_time_s, (f.slowdown - 1) * 100, f.slowdown > 0 ? 100 / f.slowdown : 0.0);
  buf.push_back('\n');
}

void write_hot_links(Buffer& buf, const std::vector<LinkUsageRow>& links) {
  std::size_t name_w = 4;
  for (const LinkUsageRow& l : links) name_w = std::max(name_w, l.name.size());
  line(buf, "Busiest links (utilisation over the iteration)");
  line(buf, "  {:<{}}  {:<12}  {:>9}  {:>12}  {:>6}  {:>5}", "link", name_w, "kind", "GB/s", "bytes", "util", "flows");
  for (const LinkUsageRow& l : links)
    line(buf, "  {:<{}}  {:<12}  {:>9.1f}  {:>12}  {:>5.1f}%  {:>5}", l.name, name_w, l.kind, l.capacity_GBps,
         human_bytes(l.bytes), 100 * l.utilisation, l.peak_flows);
  buf.push_back('\n');
}

void write_congestion(Buffer& buf, const Congestion& c) {
  line(buf, "Congestion (packet level)");
  line(buf,
       "  {} packets; PFC: {} pauses, {:.6f} s paused over all links; ECN: {} marks, {} CNPs, {} rate cuts; "
       "{} drops, {} retransmitted",
       group_digits(c.packets), group_digits(c.pause_events), c.paused_s, group_digits(c.ecn_marks),
       group_digits(c.cnps), group_digits(c.rate_cuts), group_digits(c.drops), group_digits(c.retransmitted_packets));
  line(buf, "  transfer completion times over {} transfers: median {:.1f} us, p99 {:.1f} us, max {:.1f} us",
       group_digits(c.transfers), c.fct_p50_us, c.fct_p99_us, c.fct_max_us);
  if (c.host_links == "delay")
    line(buf,
         "  NVLink and PCIe crossed without queueing (simulation.packet_host_links: delay): no contention inside "
         "a host");
  if (c.switch_buffers)
    line(buf,
         "  switch buffers: {:g} MB shared by each switch's ports; the fullest held {:.1f} KB ({}); {} drops past "
         "a full PFC headroom",
         c.switch_buffers->size_mb, c.switch_buffers->peak_kb, c.switch_buffers->peak_switch,
         group_digits(c.switch_buffers->headroom_drops));
  if (!c.worst_links.empty()) {
    std::size_t name_w = 4;
    for (const CongestionLinkRow& l : c.worst_links) name_w = std::max(name_w, l.name.size());
    line(buf, "  {:<{}}  {:<12}  {:>10}  {:>8}  {:>11}  {:>9}  {:>7}", "link", name_w, "kind", "queue KB", "pauses",
         "paused us", "ECN marks", "drops");
    for (const CongestionLinkRow& l : c.worst_links)
      line(buf, "  {:<{}}  {:<12}  {:>10.1f}  {:>8}  {:>11.1f}  {:>9}  {:>7}", l.name, name_w, l.kind, l.max_queue_kb,
           group_digits(l.pause_events), l.paused_s * 1e6, group_digits(l.ecn_marks), group_digits(l.drops));
  }
  buf.push_back('\n');
}

void write_footer(Buffer& buf, const RunResult& r) {
  const SimulationStats& s = r.simulation;
  line(buf, "Simulation: {:.3f} s wall, {} events, {} flows, {} simulated ranks, {} ops, network model {}", s.wall_s,
       group_digits(s.events), group_digits(s.flows), group_digits(s.simulated_ranks), group_digits(s.ops),
       or_dash(s.network_model));
  if (!s.compute_model.empty()) line(buf, "Compute: {}", s.compute_model);
  if (s.interference_s > 0)
    line(buf,
         "Collectives running beside kernels added {:.4f} s of compute on the critical rank "
         "(compute.interference: false prices kernels alone)",
         s.interference_s);
  if (launch_bound(r))
    line(buf,
         "Host: {} kernel launches per iteration on the critical rank at {:g} us each; the GPU waited {:.4f} s for "
         "them (launch-bound: larger micro-batches or training.cuda_graphs shorten it)",
         group_digits(s.host_launches), s.host_launch_us, r.breakdown.host);
}

}  // namespace

void write_text_report(std::ostream& out, const RunResult& r) {
  Buffer buf;
  write_header(buf, r);
  write_headline(buf, r);
  write_breakdown(buf, r);
  if (r.memory) write_memory(buf, *r.memory);
  write_comm_table(buf, r);
  if (r.compute_sources) write_compute_sources(buf, *r.compute_sources);
  if (r.explain) write_explain(buf, *r.explain);
  if (!r.hot_links.empty()) write_hot_links(buf, r.hot_links);
  if (r.congestion) write_congestion(buf, *r.congestion);
  if (r.faults) write_faults(buf, *r.faults);
  write_footer(buf, r);
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

}  // namespace trainsim
