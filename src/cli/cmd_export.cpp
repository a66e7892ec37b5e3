// `trainsim export SCENARIO --format aicb -o FILE [--set k=v]... [--per-rank]`: the scenario's workload in another
// simulator's format (docs/workload-files.md), so the same job runs in both; `trainsim run SCENARIO --workload FILE`
// reads it back.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"
#include "workload/workload_file.hpp"

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
  auto a = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand(
      "export",
      "write the scenario's workload for another simulator: aicb = a SimAI/AICB layer table whose compute "
      "times are those of trainsim's simulation");
  cmd->add_option("scenario", a->scenario, "scenario YAML file")->required();
  cmd->add_option("--format", a->format,
                  fmt::format("workload format: {}", fmt::join(workload_file_format_names(), ", ")))
      ->required();
  cmd->add_option("-o,--output", a->output, "file to write (aicb: one file; chakra: a directory)")->required();
  cmd->add_option("--set", a->overrides, "override a key: --set parallelism.tensor=4 (repeatable)");
  cmd->add_flag("--per-rank", a->per_rank, "simulate every rank (a trace per rank where the format has one)");
  return {cmd, [a]() {
            if (!workload_file_format_named(a->format))
              throw Error(fmt::format("--format: unknown workload format '{}' (known: {})", a->format,
                                      fmt::join(workload_file_format_names(), ", ")));
            const Scenario s = load_scenario(a->scenario, a->overrides);
            export_workload(s, a->format, a->output, a->per_rank);
            std::cerr << fmt::format("wrote {} ({})\n", a->output, a->format);
            return 0;
          }};
}

}  // namespace trainsim::cli
