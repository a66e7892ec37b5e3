// trainsim: how long one training iteration takes on a cluster, and where the time goes.
#include <iostream>

#include "cli/command_names.hpp"
#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"trainsim: simulate one iteration of LLM training on a GPU cluster"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("trainsim ") + TRAINSIM_VERSION);
  const std::vector<trainsim::cli::Command> commands = {trainsim::cli::add_run_command(app),
                                                        trainsim::cli::add_validate_command(app),
                                                        trainsim::cli::add_presets_command(app),
                                                        trainsim::cli::add_nccl_test_command(app),
                                                        trainsim::cli::add_topo_command(app),
                                                        trainsim::cli::add_memory_command(app),
                                                        trainsim::cli::add_ops_command(app),
                                                        trainsim::cli::add_sweep_command(app),
                                                        trainsim::cli::add_tune_command(app)};
  if (const std::string unknown = trainsim::cli::unknown_command(argc, argv, commands); !unknown.empty()) {
    std::cerr << "error: " << unknown << "\n";
    return 2;  // a usage error, as for other command-line tools
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);  // --help and --version print here: exit 0 only if that was written
    if (status != 0 || std::cout.flush()) return status;
    std::cerr << "error: cannot write to standard output\n";
    return 1;
  }
  try {
    for (const auto& c : commands)
      if (c.app->parsed()) {
        const int status = c.action();
        trainsim::cli::check_stdout();  // a full disk or closed pipe is not success
        return status;
      }
  } catch (const trainsim::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 2;
  }
  return 1;
}
