// `trainsim plan SCENARIO (--tokens N | --iterations N | --days D) [--trials N] [--seed S] [--json] [--set k=v]`:
// the whole training run from one simulated iteration (docs/run-planning.md).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "trainsim/errors.hpp"
#include "trainsim/explore.hpp"
#include "trainsim/plan.hpp"
#include "trainsim/scenario.hpp"

namespace trainsim::cli {

namespace {

struct PlanArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string tokens, iterations;
  double days = 0;
  int trials = 0;
  std::uint64_t seed = 0;
  bool json = false;
};

// "15T", "2.5e12", "300B": a count with an optional K, M, B (or G) or T suffix, as tune's --tokens reads it.
double parse_count(const std::string& flag, const std::string& text) {
  const std::optional<double> v = explore::parse_token_count(text);
  if (!v)
    throw Error(
        fmt::format("{}: expected a positive number with an optional K, M, B or T suffix (15T), got '{}'", flag, text));
  return *v;
}

int run_plan(const PlanArgs& a) {
  const int given = (a.tokens.empty() ? 0 : 1) + (a.iterations.empty() ? 0 : 1) + (a.days > 0 ? 1 : 0);
  if (given != 1) throw Error("plan: give the run's size with exactly one of --tokens, --iterations or --days");
  PlanRequest request;
  if (!a.tokens.empty()) {
    request.target = PlanRequest::Target::Tokens;
    request.amount = parse_count("--tokens", a.tokens);
  } else if (!a.iterations.empty()) {
    request.target = PlanRequest::Target::Iterations;
    request.amount = parse_count("--iterations", a.iterations);
  } else {
    request.target = PlanRequest::Target::Days;
    request.amount = a.days;
  }
  request.trials = a.trials;
  request.seed = a.seed;
  const Scenario s = load_scenario(a.scenario, a.overrides);
  const PlanResult p = plan_run(s, request);
  if (a.json)
    std::cout << plan_json(p).dump(2) << "\n";
  else
    std::cout << plan_text(p);
  return 0;
}

}  // namespace

Command add_plan_command(CLI::App& app) {
  auto a = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand(
      "plan", "the whole training run: days, goodput, interruptions, checkpoints, stragglers, energy and cost");
  cmd->add_option("scenario", a->scenario, "scenario YAML file")->required();
  cmd->add_option("--tokens", a->tokens, "tokens to train on (15T, 300B, 2.5e12)");
  cmd->add_option("--iterations", a->iterations, "iterations to run");
  cmd->add_option("--days", a->days, "wall-clock days available: how much training they buy")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--trials", a->trials, "Monte-Carlo runs for the spread of the days to train (p10/p50/p90)")
      ->check(CLI::Range(0, kMaxPlanTrials));
  cmd->add_option("--seed", a->seed, "seed of the Monte-Carlo draws (the same seed gives the same numbers)");
  cmd->add_flag("--json", a->json, "print the plan as JSON");
  cmd->add_option("--set", a->overrides, "override a key: --set training.resilience.storage_GBps=200 (repeatable)");
  return {cmd, [a] { return run_plan(*a); }};
}

}  // namespace trainsim::cli
