// `trainsim export SCENARIO --format chakra -o DIR [--set k=v]... [--per-rank]`: the scenario's workload as another
// simulator's workload file (docs/chakra.md), each compute op with the duration this scenario's simulation gave it.
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim::cli {

namespace {
struct ExportArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string format;
  std::string output;
  bool per_rank = false;
};
}  // namespace

Command add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand(
      "export", "write the scenario's workload for another simulator (chakra: one execution trace per rank)");
  cmd->add_option("scenario", args->scenario, "scenario YAML file")->required();
  cmd->add_option("--format", args->format,
                  "chakra: a directory of MLCommons Chakra traces, DIR/trainsim.<rank>.et, and DIR/comm_group.json "
                  "for ASTRA-sim")
      ->required();
  cmd->add_option("-o,--output", args->output, "where to write (chakra: a directory, created if missing)")->required();
  cmd->add_option("--set", args->overrides, "override a key: --set parallelism.tensor=4 (repeatable)");
  cmd->add_flag("--per-rank", args->per_rank,
                "write every rank's trace (ASTRA-sim needs them all) instead of one per symmetric class");
  return {cmd, [args]() {
            const Scenario s = load_scenario(args->scenario, args->overrides);
            export_workload(s, args->format, args->output, args->per_rank);
            return 0;
          }};
}

}  // namespace trainsim::cli
