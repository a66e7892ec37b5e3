#include "cli/tune_output.hpp"

#include <fmt/format.h>

#include "trainsim/explore.hpp"

namespace trainsim::cli {

using explore::Explanation;
using explore::Objective;
using explore::RankedConfig;
using explore::TuneCandidate;
using explore::TuneOutcome;

namespace {

double number_at(const nlohmann::ordered_json& j, const char* a, const char* b = nullptr) {
  const auto it = j.find(a);
  if (it == j.end()) return 0;
  if (!b) return it->is_number() ? it->get<double>() : 0;
  const auto jt = it->find(b);
  return jt != it->end() && jt->is_number() ? jt->get<double>() : 0;
}

std::string format_objective(explore::ObjectiveKind k, double v) {
  if (k == explore::ObjectiveKind::TokensPerS) return fmt::format("{:.0f}", v);
  return fmt::format("{:.4g}", v);
}

}  // namespace

std::string tune_counts_line(const explore::TuneCounts& c) {
  std::string line = fmt::format(
      "{} candidates: {} invalid, {} TP beyond scale-up, {} out of memory, {} dominated, "
      "{} simulated",
      c.candidates, c.invalid, c.tp_beyond_scale_up, c.out_of_memory, c.dominated, c.simulated);
  if (c.bounded > 0)
    line +=
        fmt::format(" ({} of them stopped before the engine: compute alone slower than the listed ones)", c.bounded);
  if (c.failed > 0) line += fmt::format(" ({} of them failed)", c.failed);
  return line;
}

void write_tune_text(std::ostream& out, const TuneOutcome& o, const Objective& objective, std::size_t top) {
  const explore::ObjectiveKind kind = objective.kind;
  out << fmt::format("trainsim tune: {} ({} on {}{}), objective {} ({}, {})\n", o.scenario, o.model,
                     o.varies_num_gpus ? "" : fmt::format("{} x ", o.basis.num_gpus), o.gpu, objective_name(kind),
                     explore::maximises(kind) ? "maximise" : "minimise", objective_unit(kind));
  out << tune_counts_line(o.counts) << "\n";
  if (o.counts.failed > 0) out << "  the first failed simulation: " << o.first_failure << "\n";
  if (o.ranked.empty()) return;

  const bool gpus = o.varies_num_gpus;
  out << "\n"
      << fmt::format(
             "{:>4}{}  {:>3} {:>3} {:>4} {:>3} {:>3} {:>3} {:>3} {:>4} {:>3}  {:<9}  {:>9}  {:>12}  {:>6}  "
             "{:>15}  {:>14}\n",
             "rank", gpus ? fmt::format(" {:>5}", "GPUs") : "", "TP", "PP", "DP", "CP", "EP", "VP", "SP", "ZeRO", "mbs",
             "recompute", "iter (s)", "tokens/s/GPU", "MFU", "memory GiB", objective_unit(kind));
  for (std::size_t i = 0; i < explore::listed_count(o, top); ++i) {
    const RankedConfig& r = o.ranked[i];
    const TuneCandidate& c = r.candidate;
    out << fmt::format(
        "{:>4}{}  {:>3} {:>3} {:>4} {:>3} {:>3} {:>3} {:>3} {:>4} {:>3}  {:<9}  {:>9.4g}  {:>12.0f}  {:>5.1f}%  "
        "{:>15}  {:>14}\n",
        i + 1, gpus ? fmt::format(" {:>5}", c.num_gpus) : "", c.tensor, c.pipeline, c.data, c.context, c.expert,
        c.virtual_pipeline, c.sequence_parallel ? "on" : "off", c.zero_stage, c.micro_batch_size,
        to_string(c.recompute), number_at(r.result, "iteration_time_s"), number_at(r.result, "tokens_per_s_per_gpu"),
        100 * number_at(r.result, "mfu"),
        fmt::format("{:.1f} / {:.1f}", number_at(r.result, "memory", "peak"),
                    number_at(r.result, "memory", "capacity")),
        format_objective(kind, r.objective));
  }
  const std::vector<Explanation> why = explore::listed_explanations(o, objective, top);
  if (!why.empty()) {
    out << "\nWhy each beats the next (critical rank's time, this one minus the next):\n";
    for (const Explanation& e : why) out << "  " << e.text << "\n";
  }
}

}  // namespace trainsim::cli
