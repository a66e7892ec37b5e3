// `trainsim ops SCENARIO [--json] [--set k=v ...]`: the distinct kernels one training iteration of the
// scenario runs, with how often each runs and which ops use it. This is the shape list a profiler
// needs (tools/profile/profile_ops.py times each row on a real GPU and writes the op database), and a
// quick look at where the compute goes without simulating.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "trainsim/workload.hpp"
#include "cli/commands.hpp"
#include "trainsim/scenario.hpp"

namespace trainsim::cli {

namespace {

struct OpsArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  bool json = false;
};

// How many op names a row lists; the rest are counted ("+3 more") so the table stays readable.
constexpr std::size_t kNamesShown = 4;

// GEMMs and attention are timed by shape; the memory-bound kinds by the bytes they move (the op
// database keys them m = n = k = 0 with their HBM bytes).
bool keyed_by_shape(KernelKind k) {
  return k == KernelKind::Gemm || k == KernelKind::FlashAttnFwd || k == KernelKind::FlashAttnBwd ||
         k == KernelKind::AttnScoreGemm;
}

// A row's identity, in the order rows are sorted: kind name, shape (m, n, k, batch, causal, bytes),
// dtype, the order the op database reports its fallbacks in (docs/op-database.md §5). Kernels the
// workload tells apart only by their modelled FLOPs (two memory passes of the same size, e.g. the
// cross-entropy exp-sum and softmax passes) share a row: a profiler and the op database cannot tell
// them apart either.
using RowKey =
    std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool, std::int64_t, std::string>;

struct OpRow {
  KernelDesc kernel;               // the first kernel seen with this key
  std::int64_t bytes = 0;          // HBM bytes per call, whole bytes
  double flops = 0;                // per call; the largest of the merged kernels
  std::int64_t count = 0;          // calls per iteration, summed over the simulated ranks
  std::vector<std::string> names;  // the distinct op names that use it, in kernel then issue order
};

RowKey key_of(const KernelDesc& k) {
  const std::int64_t bytes = std::llround(k.bytes);
  if (keyed_by_shape(k.kind)) return {to_string(k.kind), k.m, k.n, k.k, k.batch, k.causal, bytes, to_string(k.dtype)};
  return {to_string(k.kind), 0, 0, 0, 1, false, bytes, to_string(k.dtype)};
}

struct OpsTable {
  std::vector<OpRow> rows;  // sorted by RowKey
  std::int64_t compute_ops = 0;
  std::size_t simulated_ranks = 0;
};

OpsTable collect_ops(const Workload& wl) {
  // Counts and names per kernel first (an index lookup per op: large jobs have ~10^6 ops), then the
  // kernels merged into rows.
  std::vector<std::int64_t> count(wl.kernels.size(), 0);
  std::vector<std::vector<std::uint16_t>> names(wl.kernels.size());
  OpsTable t;
  t.simulated_ranks = wl.ranks.size();
  for (const RankProgram& prog : wl.ranks) {
    for (const Op& op : prog.ops) {
      if (op.type != Op::Type::Compute) continue;
      ++count.at(op.desc);
      ++t.compute_ops;
      auto& n = names[op.desc];
      if (std::find(n.begin(), n.end(), op.name) == n.end()) n.push_back(op.name);
    }
  }
  std::map<RowKey, OpRow> by_key;
  for (std::size_t i = 0; i < wl.kernels.size(); ++i) {
    if (count[i] == 0) continue;
    const KernelDesc& k = wl.kernels[i];
    auto [it, inserted] = by_key.try_emplace(key_of(k));
    OpRow& row = it->second;
    if (inserted) {
      row.kernel = k;
      row.bytes = std::llround(k.bytes);
    }
    row.flops = std::max(row.flops, k.flops);
    row.count += count[i];
    for (std::uint16_t n : names[i]) {
      const std::string& name = wl.names.at(n);
      if (std::find(row.names.begin(), row.names.end(), name) == row.names.end()) row.names.push_back(name);
    }
  }
  for (auto& [key, row] : by_key) t.rows.push_back(std::move(row));
  return t;
}

std::vector<std::string> shown_names(const OpRow& r) {
  return {r.names.begin(), r.names.begin() + static_cast<std::ptrdiff_t>(std::min(r.names.size(), kNamesShown))};
}

std::size_t more_names(const OpRow& r) { return r.names.size() - std::min(r.names.size(), kNamesShown); }

std::string names_cell(const OpRow& r) {
  std::string s = fmt::format("{}", fmt::join(shown_names(r), ", "));
  if (more_names(r) > 0) s += fmt::format(" (+{} more)", more_names(r));
  return s;
}

void write_text(std::ostream& out, const Scenario& s, const OpsTable& t) {
  out << fmt::format("trainsim ops: {}\n", s.name);
  out << fmt::format("  model {}   gpu {}   precision {}\n", s.model.name, s.cluster.gpu.name,
                     to_string(s.training.precision));
  out << fmt::format("  {} distinct kernels, {} compute ops per iteration over {} simulated rank(s)\n\n", t.rows.size(),
                     t.compute_ops, t.simulated_ranks);
  out << fmt::format("  {:<18} {:<5} {:>7} {:>7} {:>7} {:>6} {:>6} {:>12} {:>12} {:>7}  {}\n", "op", "dtype", "m", "n",
                     "k", "batch", "causal", "GFLOP", "MiB", "count", "used by");
  for (const OpRow& r : t.rows) {
    const KernelDesc& k = r.kernel;
    const bool shape = keyed_by_shape(k.kind);
    auto dim = [shape](std::int64_t v) { return shape ? std::to_string(v) : std::string("-"); };
    out << fmt::format("  {:<18} {:<5} {:>7} {:>7} {:>7} {:>6} {:>6} {:>12.3f} {:>12.2f} {:>7}  {}\n",
                       to_string(k.kind), to_string(k.dtype), dim(k.m), dim(k.n), dim(k.k), dim(k.batch),
                       shape ? (k.causal ? "yes" : "no") : "-", r.flops / 1e9,
                       static_cast<double>(r.bytes) / (1024.0 * 1024.0), r.count, names_cell(r));
  }
}

void write_json(std::ostream& out, const Scenario& s, const OpsTable& t) {
  nlohmann::ordered_json j;
  j["scenario"] = s.name;
  j["gpu"] = s.cluster.gpu.name;
  j["precision"] = to_string(s.training.precision);
  j["simulated_ranks"] = t.simulated_ranks;
  j["compute_ops"] = t.compute_ops;
  j["ops"] = nlohmann::ordered_json::array();
  for (const OpRow& r : t.rows) {
    const KernelDesc& k = r.kernel;
    const bool shape = keyed_by_shape(k.kind);
    j["ops"].push_back({{"op", to_string(k.kind)},
                        {"dtype", to_string(k.dtype)},
                        {"m", shape ? k.m : 0},
                        {"n", shape ? k.n : 0},
                        {"k", shape ? k.k : 0},
                        {"batch", shape ? k.batch : 1},
                        {"causal", shape && k.causal},
                        {"flops", r.flops},
                        {"bytes", r.bytes},
                        {"count", r.count},
                        {"names", shown_names(r)},
                        {"more_names", more_names(r)}});
  }
  out << j.dump(2) << "\n";
}

}  // namespace

Command add_ops_command(CLI::App& app) {
  auto a = std::make_shared<OpsArgs>();
  auto* cmd =
      app.add_subcommand("ops", "the distinct kernels of one iteration (the shapes to profile), without simulating");
  cmd->add_option("scenario", a->scenario, "scenario YAML file")->required();
  cmd->add_option("--set", a->overrides, "override a key: --set training.micro_batch_size=2 (repeatable)");
  cmd->add_flag("--json", a->json, "print the list as JSON");
  return {cmd, [a]() {
            const Scenario s = load_scenario(a->scenario, a->overrides);
            // The ranks `trainsim run` simulates by default, one per pipeline stage: the TP, CP and DP peers
            // of a rank run the same kernels, so the distinct shapes are those of every rank.
            check_work_limit(s, estimate_work(s, false));  // the workload is built in full: same limit as `run`
            const OpsTable t = collect_ops(generate_workload(s));
            if (a->json)
              write_json(std::cout, s, t);
            else
              write_text(std::cout, s, t);
            return 0;
          }};
}

}  // namespace trainsim::cli
