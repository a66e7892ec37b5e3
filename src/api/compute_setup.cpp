#include "api/compute_setup.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/explain.hpp"
#include "compute/measured_compute_model.hpp"
#include "compute/op_database.hpp"
#include "compute/op_database_physics.hpp"
#include "core/error.hpp"

namespace trainsim {

namespace {
std::unique_ptr<ComputeModel> roofline_for(const Scenario& s) {
  try {
    return make_roofline_model(s.cluster.gpu, s.training.attention_kernel, s.cluster.num_gpus);
  } catch (const Error& e) {
    if (s.training.attention_kernel == AttentionKernel::Auto) throw;
    throw ScenarioError(s.file, "training.attention_kernel", e.what());
  }
}
}  // namespace

std::unique_ptr<ComputeModel> make_compute_model(const Scenario& s) {
  if (!s.compute.database) return roofline_for(s);
  const std::string& path = *s.compute.database;
  OpDatabase db = [&] {
    try {
      OpDatabase loaded = OpDatabase::load(path);
      // The scenario's own description of its GPUs (a cluster.gpu_spec part, or a catalog part with overridden
      // peaks) bounds their rows too.
      check_rows_within_peak(loaded, s.cluster.gpu.name, s.cluster.gpu);
      if (s.compute.scale_from) check_rows_within_peak(loaded, s.compute.scale_from->name, *s.compute.scale_from);
      return loaded;
    } catch (const Error& e) { throw ScenarioError(s.file, "compute.database", e.what()); }
  }();
  const std::string& target = s.cluster.gpu.name;
  const bool has_target = db.has_gpu(target);
  if (s.compute.scale_from && !db.has_gpu(s.compute.scale_from->name))
    throw ScenarioError(s.file, "compute.scale_from",
                        fmt::format("{} has no rows for {} (it has: {})", path, s.compute.scale_from->name,
                                    fmt::join(db.gpus(), ", ")));
  if (!has_target && !s.compute.scale_from)
    throw ScenarioError(s.file, "compute.database",
                        fmt::format("{} has no rows for cluster.gpu {} (it has: {}); set compute.scale_from to the GPU "
                                    "it was measured on to scale its times",
                                    path, target, fmt::join(db.gpus(), ", ")));
  return make_measured_model(std::move(db), s.cluster.gpu, s.compute.scale_from, roofline_for(s));
}

ComputeSources compute_sources(const Scenario& s, const Workload& wl, const SimulationOutput& out) {
  ComputeSources c;
  c.database = s.compute.database.value_or("");
  c.scale_from = s.compute.scale_from ? s.compute.scale_from->name : "";
  std::map<std::uint32_t, ModelledKernel> modelled;
  for (std::size_t ri = 0; ri < wl.ranks.size(); ++ri) {
    const RankProgram& p = wl.ranks[ri];
    const RankTimeline& t = out.timelines[ri];
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      const Op& op = p.ops[i];
      if (op.type != Op::Type::Compute) continue;
      const std::string source = out.kernel_timings[op.desc].source;
      if (source == "measured")
        ++c.measured_ops;
      else if (source == "scaled")
        ++c.scaled_ops;
      else {
        ++c.modelled_ops;
        ModelledKernel& m = modelled[op.desc];
        if (m.count++ == 0) m.detail = kernel_detail(wl.kernels[op.desc]);
        m.time_s += to_seconds(t.end[i] - t.start[i]);
      }
    }
  }
  for (auto& [desc, m] : modelled) c.modelled.push_back(std::move(m));
  std::sort(c.modelled.begin(), c.modelled.end(), [](const ModelledKernel& a, const ModelledKernel& b) {
    return a.time_s != b.time_s ? a.time_s > b.time_s : a.detail < b.detail;
  });
  return c;
}

}  // namespace trainsim
