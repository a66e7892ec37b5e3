#include "workload/deepspeed_plan.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "model/layer_shapes.hpp"

namespace trainsim {

int DsParams::module_of(int layer, const std::string& name) const {
  for (std::size_t i = 0; i < modules.size(); ++i)
    if (modules[i].layer == layer && modules[i].name == name) return static_cast<int>(i);
  return -1;
}

double DsParams::total() const {
  double sum = 0;
  for (const DsTensor& t : tensors) sum += t.numel;
  return sum;
}

namespace {

void add_tensor(DsParams& p, int layer, const std::string& module, double numel, bool vector) {
  int id = p.modules.empty() ? -1 : static_cast<int>(p.modules.size()) - 1;
  if (id < 0 || p.modules[static_cast<std::size_t>(id)].layer != layer ||
      p.modules[static_cast<std::size_t>(id)].name != module) {
    p.modules.push_back({layer, module, {}});
    id = static_cast<int>(p.modules.size()) - 1;
  }
  p.modules[static_cast<std::size_t>(id)].tensors.push_back(static_cast<int>(p.tensors.size()));
  p.tensors.push_back({id, numel, vector});
}

}  // namespace

DsParams rank_params(const ModelSpec& m, int tensor, const std::vector<int>& layers, bool first_stage, bool last_stage,
                     bool own_lm_head) {
  DsParams p;
  const double t = static_cast<double>(tensor);
  const double vocab = word_embedding_params(m, tensor) / t;  // vocab-parallel table, V_pad/t x h
  if (first_stage) {
    add_tensor(p, -1, "embedding", vocab, false);
    if (const double pos = position_embedding_params(m); pos > 0) add_tensor(p, -1, "position_embedding", pos, false);
  }
  for (int layer : layers)
    for (const ParamTensor& pt : layer_param_tensors(m, layer))
      add_tensor(p, layer, pt.module, pt.tp_sharded ? pt.numel / t : pt.numel, pt.vector);
  if (last_stage) {
    const double h = static_cast<double>(m.hidden_size);
    add_tensor(p, -1, "final_norm", h, true);
    if (m.normalization == Normalization::LayerNorm) add_tensor(p, -1, "final_norm", h, true);
    if (own_lm_head) add_tensor(p, -1, "lm_head", vocab, false);
  }
  return p;
}

bool persistent(const DsTensor& t, double persistence_threshold) { return t.numel <= persistence_threshold; }

std::vector<ModuleVisit> zero3_visits(const DsParams& params, const std::vector<bool>& recomputed) {
  // Layers in forward order, each with its modules.
  std::vector<std::vector<int>> layer_modules;
  int last_layer = -1;
  for (std::size_t i = 0; i < params.modules.size(); ++i) {
    const DsModule& mod = params.modules[i];
    if (mod.layer < 0) continue;
    if (layer_modules.empty() || mod.layer != last_layer) layer_modules.emplace_back();
    layer_modules.back().push_back(static_cast<int>(i));
    last_layer = mod.layer;
  }
  if (recomputed.size() != layer_modules.size())
    throw Error("zero3_visits: " + std::to_string(recomputed.size()) + " recompute flags for " +
                std::to_string(layer_modules.size()) + " layers");
  const int emb = params.module_of(-1, "embedding"), pos = params.module_of(-1, "position_embedding");
  const int norm = params.module_of(-1, "final_norm");
  const int own_head = params.module_of(-1, "lm_head");
  const int head = own_head >= 0 ? own_head : emb;  // tied: the LM head multiplies by the embedding's weight
  if (emb < 0 || norm < 0) throw Error("zero3_visits: the rank must hold the whole model (ZeRO-3 has no pipeline)");
  std::vector<ModuleVisit> out;
  const auto fwd = [&](int m) {
    if (m >= 0) out.push_back({m, false});
  };
  const auto bwd = [&](int m) {
    if (m >= 0) out.push_back({m, true});
  };
  fwd(emb);
  fwd(pos);
  for (const auto& mods : layer_modules)
    for (int m : mods) fwd(m);
  fwd(norm);
  fwd(head);
  bwd(head);
  bwd(norm);
  for (std::size_t l = layer_modules.size(); l-- > 0;) {
    const auto& mods = layer_modules[l];
    if (recomputed[l])
      for (int m : mods) fwd(m);
    for (auto it = mods.rbegin(); it != mods.rend(); ++it) bwd(*it);
  }
  bwd(pos);
  bwd(emb);
  return out;
}

std::vector<TraceVisit> zero3_trace(const DsParams& params, const std::vector<ModuleVisit>& visits,
                                    double persistence_threshold) {
  std::vector<double> fetched(params.modules.size(), 0);
  for (const DsTensor& t : params.tensors)
    if (!persistent(t, persistence_threshold)) fetched[static_cast<std::size_t>(t.module)] += t.numel;
  std::vector<TraceVisit> out;
  out.reserve(visits.size());
  for (const ModuleVisit& v : visits) out.push_back({v.module, fetched[static_cast<std::size_t>(v.module)]});
  return out;
}

std::vector<IpgBucket> greedy_buckets(const std::vector<double>& numels, double cap) {
  std::vector<IpgBucket> out;
  IpgBucket cur;
  bool empty = true;
  for (std::size_t i = 0; i < numels.size(); ++i) {
    if (!empty && cur.elements + numels[i] > cap) {
      out.push_back(cur);
      cur = IpgBucket{};
    }
    cur.elements += numels[i];
    cur.last = static_cast<int>(i);
    empty = false;
  }
  if (!empty) out.push_back(cur);
  return out;
}

double Zero3Plan::gathered() const {
  double total = 0;
  for (const Zero3Batch& b : batches) total += b.elements;
  return total;
}

namespace {

enum class Status { NotAvailable, Inflight, Available };

class Coordinator {
 public:
  Coordinator(const std::vector<TraceVisit>& trace, const Zero3Config& config) : trace_(trace), c_(config) {
    int modules = 0;
    for (const TraceVisit& v : trace) {
      if (v.module < 0) throw Error("plan_zero3: negative module id " + std::to_string(v.module));
      modules = std::max(modules, v.module + 1);
    }
    numel_.assign(static_cast<std::size_t>(modules), -1);
    for (const TraceVisit& v : trace) {
      double& n = numel_[static_cast<std::size_t>(v.module)];
      if (n >= 0 && n != v.numel)
        throw Error("plan_zero3: module " + std::to_string(v.module) + " is visited with different sizes");
      n = v.numel;
    }
    status_.assign(static_cast<std::size_t>(modules), Status::NotAvailable);
    batch_of_.assign(static_cast<std::size_t>(modules), -1);
    last_consumed_.assign(static_cast<std::size_t>(modules), -1);
  }

  Zero3Plan run() {
    for (std::size_t i = 0; i < trace_.size(); ++i) visit(i);
    return std::move(plan_);
  }

 private:
  double numel(int m) const { return numel_[static_cast<std::size_t>(m)]; }
  Status& status(int m) { return status_[static_cast<std::size_t>(m)]; }

  int issue(std::vector<int> modules, std::size_t at, bool prefetch) {
    Zero3Batch b;
    b.visit = static_cast<int>(at);
    b.prefetch = prefetch;
    const int id = static_cast<int>(plan_.batches.size());
    for (int m : modules) {
      status(m) = Status::Inflight;
      batch_of_[static_cast<std::size_t>(m)] = id;
      b.elements += numel(m);
      n_available_ += numel(m);  // counted at issue (__all_gather_params)
    }
    b.modules = std::move(modules);
    plan_.batches.push_back(std::move(b));
    return id;
  }

  // The batch's handle.wait(): every module it holds becomes available.
  void complete(int batch) {
    for (int m : plan_.batches[static_cast<std::size_t>(batch)].modules)
      if (status(m) == Status::Inflight) status(m) = Status::Available;
  }

  void consume(std::size_t entry) {
    last_consumed_[static_cast<std::size_t>(trace_[entry].module)] = static_cast<int>(entry);
    cursor_ = entry + 1;
  }

  bool recurs_soon(int m, std::size_t i) const {
    // Later visit already taken by the prefetch cursor (__most_recent_step_id_param_fetched_for).
    if (last_consumed_[static_cast<std::size_t>(m)] > static_cast<int>(i)) return true;
    // __params_to_release: scan the following modules while the elements traversed before each are below
    // max_reuse_distance.
    double traversed = 0;
    for (std::size_t j = i + 1; j < trace_.size(); ++j) {
      if (traversed >= c_.max_reuse_distance) break;
      if (trace_[j].module == m) return true;
      traversed += trace_[j].numel;
    }
    return false;
  }

  void visit(std::size_t i) {
    const int m = trace_[i].module;
    Zero3Visit v;
    v.module = m;
    const bool fetchable = numel(m) > 0;  // a module of only persistent parameters has nothing to fetch
    if (fetchable && status(m) == Status::NotAvailable) {
      v.on_demand_batch = issue({m}, i, false);
      v.on_demand = numel(m);
    }
    if (fetchable && status(m) == Status::Inflight) {
      v.wait_batch = batch_of_[static_cast<std::size_t>(m)];
      complete(v.wait_batch);
    }
    // Pop the visit's own entry unless a prefetch already consumed it.
    if (cursor_ <= i) consume(i);
    // One coalesced prefetch of the modules ahead (fetch_sub_module).
    const double budget = std::min(c_.max_live_parameters - n_available_, c_.prefetch_bucket_size);
    std::vector<int> chosen;
    double prefetching = 0;
    while (cursor_ < trace_.size() && prefetching < budget) {
      const std::size_t e = cursor_;
      const int q = trace_[e].module;
      if (numel(q) > 0 && status(q) == Status::NotAvailable &&
          std::find(chosen.begin(), chosen.end(), q) == chosen.end()) {
        chosen.push_back(q);
        prefetching += numel(q);
      }
      consume(e);
    }
    if (!chosen.empty()) {
      v.prefetch = prefetching;
      v.prefetch_batch = issue(std::move(chosen), i, true);
    }
    if (fetchable && !recurs_soon(m, i)) {
      status(m) = Status::NotAvailable;
      n_available_ -= numel(m);
      v.released = true;
    }
    plan_.visits.push_back(v);
  }

  const std::vector<TraceVisit>& trace_;
  Zero3Config c_;
  std::vector<double> numel_;
  std::vector<Status> status_;
  std::vector<int> batch_of_, last_consumed_;
  std::size_t cursor_ = 0;
  double n_available_ = 0;
  Zero3Plan plan_;
};

}  // namespace

Zero3Plan plan_zero3(const std::vector<TraceVisit>& trace, const Zero3Config& config) {
  return Coordinator(trace, config).run();
}

}  // namespace trainsim
