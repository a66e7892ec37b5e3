// `trainsim tune SCENARIO`: the parallel configuration (TP, PP, DP, CP, EP, interleaving, sequence
// parallelism, ZeRO, micro-batch, recompute) with the best objective that fits in memory. Candidates
// are pruned without simulating (invalid, TP beyond scale-up, out of memory, dominated), the rest are
// simulated in parallel and ranked (docs/tune.md).
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "cli/progress.hpp"
#include "cli/thread_count.hpp"
#include "cli/tune_output.hpp"
#include "trainsim/errors.hpp"
#include "trainsim/explore.hpp"

namespace trainsim::cli {

namespace {

struct TuneArgs {
  std::string scenario;
  // Numbers are read as text so that every bad value is an error naming its flag, exit status 1.
  std::string top = "5";
  std::string objective = "tokens_per_s";
  std::string gpu_hour_price;
  std::string tokens;
  std::string threads = "0";
  bool json = false;
  std::string html;
  bool allow_tp_beyond_scale_up = false;
  std::vector<std::string> space;
  std::vector<std::string> overrides;
};

int parse_int_flag(const std::string& flag, const std::string& text, int minimum, const char* expected) {
  int v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < minimum)
    throw Error(fmt::format("{}: expected {}, got '{}'", flag, expected, text));
  return v;
}

explore::Objective read_objective(const TuneArgs& a) {
  std::optional<double> price;
  if (!a.gpu_hour_price.empty()) {
    char* end = nullptr;
    price = std::strtod(a.gpu_hour_price.c_str(), &end);
    if (end != a.gpu_hour_price.c_str() + a.gpu_hour_price.size() || !std::isfinite(*price) || !(*price > 0))
      throw Error("--gpu-hour-price: expected the USD price of one GPU-hour, a positive number, got '" +
                  a.gpu_hour_price + "'");
  }
  return explore::read_objective(a.objective, price,
                                 a.tokens.empty() ? std::nullopt : std::optional<std::string>(a.tokens));
}

}  // namespace

Command add_tune_command(CLI::App& app) {
  auto a = std::make_shared<TuneArgs>();
  auto* cmd = app.add_subcommand("tune",
                                 "search TP/PP/DP/CP/EP, micro-batch, recompute, ZeRO for the best fitting "
                                 "configuration");
  cmd->add_option("scenario", a->scenario, "scenario YAML file (its model, cluster, global batch and framework stay)")
      ->required();
  cmd->add_option("--top", a->top, "configurations to list (default 5)");
  cmd->add_option("--objective", a->objective,
                  "tokens_per_s (default, maximise) | cost | time_to_train | days | energy (minimise); days, energy "
                  "and cost with --tokens rank the whole run: failures, restarts, checkpoints (docs/tune.md)");
  cmd->add_option(
      "--gpu-hour-price", a->gpu_hour_price,
      "USD per GPU-hour (--objective cost; with --tokens it replaces the scenario's cost.usd_per_gpu_hour)");
  cmd->add_option("--tokens", a->tokens,
                  "tokens to train on, e.g. 1e12 or 15T (needed by time_to_train, days and energy; cost of the run)");
  cmd->add_option("--threads", a->threads, "simulations at a time (default 0 = all cores)");
  cmd->add_flag("--json", a->json, "print one JSON object: counts, ranked configurations, explanations");
  cmd->add_option("--html", a->html,
                  "write a self-contained HTML page: the best configuration and its --set overrides, a chart and a "
                  "sortable table of the listed ones, the pruning counts");
  cmd->add_flag("--allow-tp-beyond-scale-up", a->allow_tp_beyond_scale_up,
                "also consider tensor parallelism wider than the scale-up domain");
  cmd->add_option("--space", a->space,
                  "replace a key's default values: --space parallelism.pipeline=1,2,4 (repeatable; see docs/tune.md)");
  cmd->add_option("--set", a->overrides,
                  "override a key for every candidate; on a searched key it pins that key (repeatable)");
  return {cmd, [a]() {
            explore::TuneRequest req;
            req.scenario = a->scenario;
            req.overrides = a->overrides;
            req.objective = read_objective(*a);
            const auto top =
                static_cast<std::size_t>(parse_int_flag("--top", a->top, 1, "a positive number of configurations"));
            req.top = top + 1;  // the listed ones and the next, which the last is explained against
            req.threads = parse_thread_count("--threads", a->threads);
            for (const std::string& s : a->space) explore::add_space_values(req.space, s, "--space");
            req.space.allow_tp_beyond_scale_up = a->allow_tp_beyond_scale_up;
            // A missing directory is found before the search, not after it.
            if (!a->html.empty())
              if (const std::string problem = check_output_dir(a->html, "--html"); !problem.empty())
                throw Error(problem);

            Progress progress("configurations");
            req.progress = [&progress](std::size_t done, std::size_t total) { progress.update(done, total); };
            const explore::TuneOutcome outcome = explore::run_tune(req);
            progress.finish();

            // Written even when nothing ranked: the page shows the counts and why.
            if (!a->html.empty())
              write_output_file("--html", a->html, [&](std::ostream& f) {
                f << explore::render_tune_html(outcome, req.objective, top, a->scenario);
              });
            if (a->json)
              std::cout << explore::tune_json(outcome, req.objective, top).dump(2) << "\n";
            else
              write_tune_text(std::cout, outcome, req.objective, top);
            std::cout.flush();  // the counts before the error line
            if (outcome.ranked.empty()) throw Error(explore::tune_nothing_ranked_message(outcome));
            return 0;
          }};
}

}  // namespace trainsim::cli
