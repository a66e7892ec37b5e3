// trainsim: how long one training iteration takes on a cluster, and where the time goes.
#include <cstdlib>
#include <iostream>

#include "cli/allocator_tuning.hpp"
#include "cli/command_names.hpp"
#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "trainsim/errors.hpp"

int main(int argc, char** argv) {
  trainsim::cli::keep_freed_memory_for_reuse();
  CLI::App app{"trainsim: simulate one iteration of LLM training on a GPU cluster"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("trainsim ") + TRAINSIM_VERSION);
  const std::vector<trainsim::cli::Command> commands = {
      trainsim::cli::add_run_command(app),     trainsim::cli::add_validate_command(app),
      trainsim::cli::add_presets_command(app), trainsim::cli::add_nccl_test_command(app),
      trainsim::cli::add_topo_command(app),    trainsim::cli::add_memory_command(app),
      trainsim::cli::add_ops_command(app),     trainsim::cli::add_sweep_command(app),
      trainsim::cli::add_tune_command(app),    trainsim::cli::add_keys_command(app),
      trainsim::cli::add_export_command(app),  trainsim::cli::add_plan_command(app),
      trainsim::cli::add_serve_command(app)};
  if (const std::string unknown = trainsim::cli::unknown_command(argc, argv, commands); !unknown.empty()) {
    std::cerr << "error: " << unknown << "\n";
    return 1;  // a usage error, like every other mistake on the command line; 2 is kept for trainsim's bugs
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
    // For tests of the exit status only: no input can break an invariant on purpose (that is what an
    // invariant is), so tests/cli/exit_status_cli_test.cpp sets this variable to see how a broken one
    // is reported. It does nothing else, and nothing sets it outside that test.
    TRAINSIM_CHECK(std::getenv("TRAINSIM_TEST_INTERNAL_ERROR") == nullptr,
                   "TRAINSIM_TEST_INTERNAL_ERROR is set, so this run stops as at a broken invariant");
    for (const auto& c : commands)
      if (c.app->parsed()) {
        const int status = c.action();
        trainsim::cli::check_stdout();  // a full disk or closed pipe is not success
        return status;
      }
  } catch (const trainsim::Error& e) {  // the user's input: exit 1
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const trainsim::InternalError& e) {  // a broken invariant (TRAINSIM_CHECK): exit 2
    std::cerr << trainsim::internal_error_message(e) << "\n";
    return 2;
  } catch (const std::exception& e) {  // nothing of trainsim's own should get here: also a bug
    std::cerr << "internal error: " << e.what() << " — this is a bug in trainsim, please report it with the scenario\n";
    return 2;
  }
  return 1;
}
