#pragma once
// Subcommands of the trainsim CLI. Each registers its flags on the app and returns the action to
// run when selected; actions return the process exit status.
#include <functional>

#include <CLI/CLI.hpp>

namespace trainsim::cli {

using Action = std::function<int()>;
struct Command {
  CLI::App* app = nullptr;
  Action action;
};

Command add_run_command(CLI::App& app);
Command add_validate_command(CLI::App& app);
Command add_presets_command(CLI::App& app);
Command add_nccl_test_command(CLI::App& app);
Command add_topo_command(CLI::App& app);
Command add_memory_command(CLI::App& app);
Command add_ops_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);
Command add_tune_command(CLI::App& app);
Command add_keys_command(CLI::App& app);
Command add_export_command(CLI::App& app);
Command add_plan_command(CLI::App& app);
Command add_serve_command(CLI::App& app);

}  // namespace trainsim::cli
