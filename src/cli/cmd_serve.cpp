// `trainsim serve`: the HTTP API, job queue and web page (docs/service.md) until SIGINT or SIGTERM.
#include <csignal>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/commands.hpp"
#include "trainsim/service.hpp"

namespace trainsim::cli {

namespace {

// The server that SIGINT / SIGTERM stop. A signal handler may only touch a lock-free atomic, so the handler sets a
// flag and a watcher thread does the stopping.
std::atomic<bool> stop_requested{false};
extern "C" void request_stop(int) { stop_requested.store(true); }

}  // namespace

Command add_serve_command(CLI::App& app) {
  auto options = std::make_shared<service::ServerOptions>();
  auto* cmd = app.add_subcommand("serve", "serve the HTTP API, job queue and web page (docs/service.md)");
  cmd->add_option("--port", options->port, "TCP port (0: any free port, printed at start)")->capture_default_str();
  cmd->add_option("--bind", options->bind,
                  "address to listen on (default 127.0.0.1 without --token-file, 0.0.0.0 with it)");
  cmd->add_option("--data", options->data_dir, "directory of the job database and uploaded files")
      ->capture_default_str();
  cmd->add_option("--workers", options->workers, "jobs simulated at once")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--token-file", options->token_file,
                  "file of bearer tokens, one per line; requests without one are answered 401");
  cmd->add_option("--max-body", options->max_body_bytes, "largest request body in bytes (413 above)")
      ->capture_default_str();
  cmd->add_option("--max-queue", options->max_queue, "queued jobs at most (429 above)")->capture_default_str();
  cmd->add_option("--keep-days", options->keep_days,
                  "delete finished jobs older than this many days, at start and hourly (0: keep every job)")
      ->capture_default_str();
  cmd->add_option("--max-gpus", options->limits.max_gpus, "largest cluster.num_gpus a job may simulate")
      ->capture_default_str();
  cmd->add_option("--max-points", options->limits.max_sweep_points, "most points of one sweep")->capture_default_str();
  cmd->add_option("--max-ops", options->limits.max_ops, "simulation.max_ops at most (runs estimated above are refused)")
      ->capture_default_str();
  cmd->add_option("--job-timeout", options->limits.max_wall_s, "seconds a job may run before it is stopped (failed)")
      ->capture_default_str();
  return {cmd, [options]() {
            service::Server server(*options);
            server.bind();
            std::cout << server.startup_message() << std::endl;
            std::signal(SIGINT, request_stop);
            std::signal(SIGTERM, request_stop);
            std::thread watcher([&server] {
              while (!stop_requested.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
              server.stop();
            });
            server.run();
            stop_requested.store(true);
            watcher.join();
            return 0;
          }};
}

}  // namespace trainsim::cli
