#include "api/explain.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "api/compute_intervals.hpp"
#include "core/units.hpp"

namespace trainsim {

std::string kernel_detail(const KernelDesc& k) {
  switch (k.kind) {
    case KernelKind::Gemm:
    case KernelKind::AttnScoreGemm:
      return fmt::format("{} {}x{}x{}{} {}", to_string(k.kind), k.m, k.n, k.k,
                         k.batch > 1 ? fmt::format(" x{}", k.batch) : "", to_string(k.dtype));
    case KernelKind::FlashAttnFwd:
    case KernelKind::FlashAttnBwd:
      return fmt::format("{} {} heads*batch, q {} kv {} d {}{}{} {}", to_string(k.kind), k.batch, k.m, k.n, k.k,
                         k.causal ? " causal" : "", k.window > 0 ? fmt::format(" window {}", k.window) : "",
                         to_string(k.dtype));
    default: return fmt::format("{} {:.1f} MiB", to_string(k.kind), k.bytes / kMiB);
  }
}

namespace {

std::string bytes_text(double b) {
  if (b >= kGiB) return fmt::format("{:.2f} GiB", b / kGiB);
  if (b >= kMiB) return fmt::format("{:.1f} MiB", b / kMiB);
  return fmt::format("{:.1f} KiB", b / 1024.0);
}

void keep_top(std::vector<ExplainRow>& rows, std::size_t top) {
  // Longest first; equal times by name then detail, so the order never depends on the map's.
  std::sort(rows.begin(), rows.end(), [](const ExplainRow& a, const ExplainRow& b) {
    return a.time_s != b.time_s ? a.time_s > b.time_s : std::tie(a.name, a.detail) < std::tie(b.name, b.detail);
  });
  if (rows.size() > top) rows.resize(top);
}

// What set an op's speed, with the source of each factor (docs/compute-model.md has the details).
std::string why_text(const ExplainRow& r, KernelKind kind) {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : "; ") + part; };
  if (r.efficiency > 0)
    add(fmt::format("{:.2f} of dense peak (shape tables, src/compute/roofline_constants.hpp)", r.efficiency));
  if (r.clock_factor < 1.0)
    add(
        fmt::format("clock x{:.3f} (sustained / calibration clock from data/gpus.yaml, at the pace of the job's "
                    "slowest GPU)",
                    r.clock_factor));
  if (r.alone_s > 0 && r.interference_s > 1e-4 * r.alone_s)
    add(fmt::format("+{:.1f}% beside collectives (their CTAs and HBM traffic)", 100.0 * r.interference_s / r.alone_s));
  if (r.name.rfind("fp8.", 0) == 0) add("FP8 quantization kernel (Transformer Engine)");
  if (r.name.rfind("fp4.", 0) == 0)
    add("NVFP4 quantization kernel (Transformer Engine's NVFP4 recipe: amax pass, then quantize with the Hadamard "
        "transform; src/workload/layer_ops_fp4.cpp)");
  if (kind == KernelKind::TorchLayerNorm)
    add("PyTorch's own layer_norm kernel, at about half the HBM bandwidth of a fused norm (measured on an H200; "
        "training.fusion: eager)");
  if (r.name.find("_layout") != std::string::npos)
    add("a layout copy eager PyTorch makes around the attention kernel (training.fusion: eager)");
  return s;
}

}  // namespace

Explanation explain_rank(const Workload& wl, const SimulationOutput& out, std::size_t ri, double iteration_s,
                         const std::string& collective_source, std::size_t top) {
  const RankProgram& p = wl.ranks[ri];
  const RankTimeline& t = out.timelines[ri];
  const auto busy = compute_intervals(p, t);
  // (is collective, name, descriptor) -> row: the same name on the same kernel or collective is one row
  // (every layer's fc1 of one shape), different shapes under one name stay apart.
  std::map<std::tuple<bool, std::uint16_t, std::uint32_t>, ExplainRow> rows;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const Op& op = p.ops[i];
    const bool coll = op.type == Op::Type::Collective;
    ExplainRow& row = rows[{coll, op.name, op.desc}];
    const SimTime dur = t.end[i] - t.start[i];
    if (row.count++ == 0) {
      row.name = wl.names[op.name];
      if (coll) {
        const CollectiveDesc& c = wl.collectives[op.desc];
        const CommGroup& g = wl.groups[c.group];
        row.detail = c.exchange.on() ? fmt::format(
                                           "DeepEP exchange {} {} ranks, {} of tokens: {:.2f} copies each over the "
                                           "network, {:.2f} over NVLink",
                                           to_string(g.kind), g.ranks.size(), bytes_text(static_cast<double>(c.bytes)),
                                           c.exchange.remote_copies, c.exchange.nvlink_copies)
                                     : fmt::format("{} {} {} ranks, {}", to_string(c.kind), to_string(g.kind),
                                                   g.ranks.size(), bytes_text(static_cast<double>(c.bytes)));
        row.source = collective_source;
      } else {
        const KernelTiming& kt = out.kernel_timings[op.desc];
        row.detail = kernel_detail(wl.kernels[op.desc]);
        row.source = kt.source;
        row.efficiency = kt.efficiency;
        row.clock_factor = kt.clock_factor;
      }
    }
    if (!coll) row.alone_s += to_seconds(out.kernel_timings[op.desc].time);
    row.time_s += to_seconds(dur);
    row.exposed_s += coll ? to_seconds(dur - covered(busy, t.start[i], t.end[i])) : to_seconds(dur);
  }
  Explanation e;
  e.rank = p.rank;
  for (auto& [key, row] : rows) {
    row.share = iteration_s > 0 ? row.time_s / iteration_s : 0;
    if (!std::get<0>(key)) {
      row.interference_s = std::max(0.0, row.time_s - row.alone_s);
      row.why = why_text(row, wl.kernels[std::get<2>(key)].kind);
    }
    (std::get<0>(key) ? e.collectives : e.ops).push_back(std::move(row));
  }
  keep_top(e.ops, top);
  keep_top(e.collectives, top);
  return e;
}

}  // namespace trainsim
