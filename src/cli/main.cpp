// trainsim: how long one training iteration takes on a cluster, and where the time goes.
#include <iostream>

#include "cli/commands.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"trainsim: simulate one iteration of LLM training on a GPU cluster"};
  app.require_subcommand(1);
  const std::vector<trainsim::cli::Command> commands = {trainsim::cli::add_run_command(app),
                                                        trainsim::cli::add_validate_command(app),
                                                        trainsim::cli::add_presets_command(app),
                                                        trainsim::cli::add_nccl_test_command(app),
                                                        trainsim::cli::add_topo_command(app),
                                                        trainsim::cli::add_memory_command(app),
                                                        trainsim::cli::add_ops_command(app),
                                                        trainsim::cli::add_sweep_command(app),
                                                        trainsim::cli::add_tune_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    for (const auto& c : commands)
      if (c.app->parsed()) return c.action();
  } catch (const trainsim::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 2;
  }
  return 1;
}
