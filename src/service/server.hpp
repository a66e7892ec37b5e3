#pragma once
// `trainsim serve` (docs/service.md): an HTTP/JSON API over the public API with a persistent job queue and a web
// page. Jobs are in SQLite before a submission is answered; worker threads run them one each; a restart (even after
// kill -9) puts the jobs that were running back in the queue and keeps every finished result.
#include <cstddef>
#include <memory>
#include <string>

#include "service/job_runner.hpp"

namespace trainsim::service {

struct ServerOptions {
  std::string bind;                              // empty: 127.0.0.1 without tokens, 0.0.0.0 with them
  int port = 8080;                               // 0: any free port (tests)
  std::string data_dir = "trainsim-data";        // jobs.sqlite and files/ (uploads, by content hash)
  int workers = 1;                               // jobs run at once (0: they queue and wait)
  std::string token_file;                        // bearer tokens, one per line; empty: no authentication
  std::size_t max_body_bytes = 4 * 1024 * 1024;  // a larger request is answered 413
  int max_queue = 1000;                          // queued jobs; a submission beyond is answered 429
  // Finished jobs (done, failed, cancelled) older than this many days are deleted at start and then hourly, result
  // and all; 0 keeps every job. Uploaded files stay (other jobs may name them).
  double keep_days = 0;
  JobLimits limits;
};

class Server {
 public:
  // Opens (or creates) the data directory and its job store, requeues the jobs a previous process left running,
  // reads the tokens. Throws Error naming the option (--data, --token-file) when they cannot be used.
  explicit Server(ServerOptions options);
  ~Server();  // stops serving and the workers; a job still running stays "running" in the store and is requeued by
              // the next start, as after a crash
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the listening socket; returns the port (the one chosen when options.port is 0). Throws Error naming
  // --port / --bind when it cannot.
  int bind();
  // Serves until stop(); starts the workers first. Call bind() before.
  void run();
  void stop();
  // What `trainsim serve` prints when it starts: the address, the data directory, the workers, whether tokens are
  // required (and that it listens on 127.0.0.1 only when they are not).
  std::string startup_message() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainsim::service
