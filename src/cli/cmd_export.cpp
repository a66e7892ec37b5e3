// `trainsim export SCENARIO --format aicb|chakra -o PATH [--set k=v]... [--per-rank]`: the scenario's workload in
// another simulator's format (docs/workload-files.md, docs/chakra.md), each compute op with the time this scenario's
// simulation gave it, so the same job runs in both; `trainsim run SCENARIO --workload PATH` reads it back.
// `--format simai-topo` writes the scenario's fabric instead, as a SimAI topology file (docs/topologies.md), which
// cluster.network.simai_topology reads back.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "trainsim/errors.hpp"
#include "trainsim/scenario.hpp"
#include "trainsim/trainsim.hpp"
#include "trainsim/workload.hpp"

namespace trainsim::cli {

namespace {
constexpr const char* kFabricFormat = "simai-topo";

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
      "write the scenario's workload for another simulator (aicb: a SimAI/AICB layer table; chakra: one "
      "execution trace per rank), its compute times those of trainsim's simulation; or its fabric (simai-topo: a "
      "SimAI topology file)");
  cmd->add_option("scenario", a->scenario, "scenario YAML file")->required();
  cmd->add_option("--format", a->format,
                  fmt::format("workload format: {}; or {}: the fabric as a SimAI topology file",
                              fmt::join(workload_file_format_names(), ", "), kFabricFormat))
      ->required();
  cmd->add_option("-o,--output", a->output,
                  "where to write (aicb, simai-topo: one file; chakra: a directory, created if missing, of "
                  "DIR/trainsim.<rank>.et and DIR/comm_group.json for ASTRA-sim)")
      ->required();
  cmd->add_option("--set", a->overrides, "override a key: --set parallelism.tensor=4 (repeatable)");
  cmd->add_flag("--per-rank", a->per_rank,
                "simulate every rank; chakra: write every rank's trace (ASTRA-sim needs them all) instead of one per "
                "symmetric class");
  return {cmd, [a]() {
            if (a->format == kFabricFormat) {  // the cluster block alone
              if (a->per_rank) throw Error("--per-rank: applies to workload formats, not to --format simai-topo");
              const Scenario s = load_scenario(a->scenario, a->overrides, ScenarioNeeds::ClusterOnly);
              export_simai_topology(s, a->output);
              std::cerr << fmt::format("wrote {} ({})\n", a->output, a->format);
              return 0;
            }
            if (!workload_file_format_named(a->format))  // before loading the scenario
              throw Error(fmt::format("--format {}: unknown; known formats: {}, {}", a->format,
                                      fmt::join(workload_file_format_names(), ", "), kFabricFormat));
            const Scenario s = load_scenario(a->scenario, a->overrides);
            export_workload(s, a->format, a->output, a->per_rank);
            std::cerr << fmt::format("wrote {} ({})\n", a->output, a->format);
            return 0;
          }};
}

}  // namespace trainsim::cli
