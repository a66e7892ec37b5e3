// RunResult -> the JSON object of `trainsim run --json`. Field names are the contract of
// the scenario spec's "Result" (README.md, `trainsim run --json`); ordered_json keeps them in the order written
// here so the same result always dumps to the same bytes.
#include "report/reports.hpp"

namespace trainsim {

namespace {

nlohmann::ordered_json breakdown_json(const Breakdown& b) {
  nlohmann::ordered_json j;
  j["compute"] = b.compute;
  j["exposed_comm"] = b.exposed_comm;
  j["bubble"] = b.bubble;
  j["optimizer"] = b.optimizer;
  j["other"] = b.other;
  nlohmann::ordered_json by_group;
  by_group["tp"] = b.exposed_tp;
  by_group["cp"] = b.exposed_cp;
  by_group["dp"] = b.exposed_dp;
  by_group["pp"] = b.exposed_pp;
  by_group["ep"] = b.exposed_ep;
  by_group["other"] = b.exposed_other;
  j["exposed_comm_by_group"] = std::move(by_group);
  // Of `other`, what is known: the GPU waiting for the host to launch kernels (the rest is idle time nothing claimed).
  j["other_by_cause"] = nlohmann::ordered_json{{"host_launch", b.host}};
  return j;
}

nlohmann::ordered_json memory_json(const MemoryUsage& m) {
  nlohmann::ordered_json j;
  j["weights"] = m.weights;
  j["grads"] = m.grads;
  j["optimizer"] = m.optimizer;
  j["activations"] = m.activations;
  j["other"] = m.other;
  j["peak"] = m.peak;
  j["capacity"] = m.capacity;
  j["fits"] = m.fits;
  j["worst_stage"] = m.worst_stage;
  return j;
}

nlohmann::ordered_json comm_json(const std::vector<CommStat>& comm) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const CommStat& c : comm) {
    nlohmann::ordered_json j;
    j["kind"] = c.kind;
    j["group"] = c.group;
    j["group_size"] = c.group_size;
    j["count"] = c.count;
    j["bytes"] = c.bytes;
    j["time_s"] = c.time_s;
    j["exposed_s"] = c.exposed_s;
    j["algorithm"] = c.algorithm;
    j["protocol"] = c.protocol;
    j["max_call_s"] = c.max_call_s;
    rows.push_back(std::move(j));
  }
  return rows;
}

nlohmann::ordered_json simulation_json(const SimulationStats& s) {
  nlohmann::ordered_json j;
  j["wall_s"] = s.wall_s;
  j["events"] = s.events;
  j["flows"] = s.flows;
  j["network_model"] = s.network_model;
  j["simulated_ranks"] = s.simulated_ranks;
  j["ops"] = s.ops;
  j["compute_model"] = s.compute_model;
  j["interference_s"] = s.interference_s;
  j["host_launch_us"] = s.host_launch_us;
  j["host_launches"] = s.host_launches;
  return j;
}

}  // namespace

nlohmann::ordered_json to_json(const RunResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  j["iteration_time_s"] = r.iteration_time_s;
  // Unknown without a model block (a workload file's job): null, never a 0 a reader could take for a measurement.
  auto known = [&](double v) {
    return r.throughput_known ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
  };
  j["tokens_per_s"] = known(r.tokens_per_s);
  j["tokens_per_s_per_gpu"] = known(r.tokens_per_s_per_gpu);
  j["tflops_per_gpu"] = known(r.tflops_per_gpu);
  j["mfu"] = known(r.mfu);
  j["hfu"] = known(r.hfu);
  j["breakdown"] = breakdown_json(r.breakdown);
  j["memory"] = r.memory ? memory_json(*r.memory) : nlohmann::ordered_json(nullptr);
  j["comm"] = comm_json(r.comm);
  j["simulation"] = simulation_json(r.simulation);
  nlohmann::ordered_json inferred = nlohmann::ordered_json::array();
  for (const InferredSetting& v : r.inferred) inferred.push_back({{"key", v.key}, {"value", v.value}, {"why", v.why}});
  j["simulation"]["inferred"] = std::move(inferred);  // settings validation chose (the spec's top level is fixed)
  nlohmann::ordered_json warnings = nlohmann::ordered_json::array();
  for (const ScenarioWarningNote& w : r.warnings) warnings.push_back({{"key", w.key}, {"message", w.message}});
  j["simulation"]["warnings"] = std::move(warnings);
  if (!r.hot_links.empty()) {
    nlohmann::ordered_json links = nlohmann::ordered_json::array();
    for (const LinkUsageRow& l : r.hot_links) {
      nlohmann::ordered_json x;
      x["link"] = l.name;
      x["kind"] = l.kind;
      x["capacity_GBps"] = l.capacity_GBps;
      x["bytes"] = l.bytes;
      x["utilisation"] = l.utilisation;
      x["peak_flows"] = l.peak_flows;
      links.push_back(std::move(x));
    }
    j["hot_links"] = std::move(links);
  }
  if (r.congestion) {
    const Congestion& c = *r.congestion;
    nlohmann::ordered_json x;
    x["packets"] = c.packets;
    x["pause_events"] = c.pause_events;
    x["paused_s"] = c.paused_s;
    x["ecn_marks"] = c.ecn_marks;
    x["cnps"] = c.cnps;
    x["rate_cuts"] = c.rate_cuts;
    x["drops"] = c.drops;
    x["retransmitted_packets"] = c.retransmitted_packets;
    x["transfers"] = c.transfers;
    x["fct_p50_us"] = c.fct_p50_us;
    x["fct_p99_us"] = c.fct_p99_us;
    x["fct_max_us"] = c.fct_max_us;
    x["host_links"] = c.host_links;
    if (c.switch_buffers)
      x["switch_buffers"] = {{"size_mb", c.switch_buffers->size_mb},
                             {"peak_kb", c.switch_buffers->peak_kb},
                             {"peak_switch", c.switch_buffers->peak_switch},
                             {"headroom_drops", c.switch_buffers->headroom_drops}};
    nlohmann::ordered_json links = nlohmann::ordered_json::array();
    for (const CongestionLinkRow& l : c.worst_links)
      links.push_back({{"link", l.name},
                       {"kind", l.kind},
                       {"max_queue_kb", l.max_queue_kb},
                       {"pause_events", l.pause_events},
                       {"paused_s", l.paused_s},
                       {"ecn_marks", l.ecn_marks},
                       {"drops", l.drops}});
    x["worst_links"] = std::move(links);
    j["congestion"] = std::move(x);
  }
  if (r.compute_sources) {
    const ComputeSources& c = *r.compute_sources;
    nlohmann::ordered_json m = nlohmann::ordered_json::array();
    for (const ModelledKernel& k : c.modelled)
      m.push_back({{"kernel", k.detail}, {"count", k.count}, {"time_s", k.time_s}});
    j["compute"] = {{"database", c.database},     {"scale_from", c.scale_from},     {"measured_ops", c.measured_ops},
                    {"scaled_ops", c.scaled_ops}, {"modelled_ops", c.modelled_ops}, {"modelled", std::move(m)}};
  }
  if (r.explain) {
    auto rows = [](const std::vector<ExplainRow>& v) {
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (const ExplainRow& e : v)
        a.push_back({{"name", e.name},
                     {"detail", e.detail},
                     {"count", e.count},
                     {"time_s", e.time_s},
                     {"share", e.share},
                     {"exposed_s", e.exposed_s},
                     {"source", e.source},
                     {"alone_s", e.alone_s},
                     {"interference_s", e.interference_s},
                     {"efficiency", e.efficiency},
                     {"clock_factor", e.clock_factor},
                     {"why", e.why}});
      return a;
    };
    j["explain"] = {
        {"rank", r.explain->rank}, {"ops", rows(r.explain->ops)}, {"collectives", rows(r.explain->collectives)}};
  }
  if (r.faults) {
    nlohmann::ordered_json f;
    f["count"] = r.faults->faults;
    f["fault_free_iteration_time_s"] = r.faults->fault_free_iteration_time_s;
    f["slowdown"] = r.faults->slowdown;
    j["faults"] = std::move(f);
  }
  if (r.energy) {
    const IterationEnergy& e = *r.energy;
    j["energy"] = {{"joules_per_iteration", e.joules},
                   {"tokens_per_joule", known(e.tokens_per_joule)},
                   {"gpu_average_w", e.gpu_average_w},
                   {"gpu_compute_w", e.gpu_compute_w},
                   {"gpu_communication_w", e.gpu_communication_w},
                   {"gpu_idle_w", e.gpu_idle_w},
                   {"node_overhead_w_per_gpu", e.node_overhead_w_per_gpu},
                   {"network_w_per_gpu", e.network_w_per_gpu},
                   {"pue", e.pue},
                   {"basis", e.basis}};
  }
  j["critical_rank"] = r.critical_rank;
  return j;
}

}  // namespace trainsim
