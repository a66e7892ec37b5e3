#pragma once
// The jobs of `trainsim serve`, kept in one SQLite database so that a job accepted by the server survives a restart
// (docs/service.md). The HTTP threads insert, list and cancel; the workers claim, report progress and finish. One
// connection serves them all behind a mutex: every call is short (one statement, or two for list), and SQLite
// serialises writers anyway.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "service/job.hpp"

struct sqlite3;

namespace trainsim::service {

class JobStore {
 public:
  // Opens or creates the database at `path` (":memory:" for a private one that lives as long as this object). The
  // journal is WAL with synchronous=FULL, so a job is on disk when insert() returns (the server answers 202 only
  // after that). Throws trainsim::Error naming the path and SQLite's message when the file cannot be opened or
  // created, is not an SQLite database, holds other tables than a job store's, or was written by a newer trainsim
  // (a higher schema version). `clock` gives the time in Unix epoch milliseconds (tests inject one); empty means
  // the system clock.
  explicit JobStore(const std::string& path, std::function<std::int64_t()> clock = {});
  ~JobStore();  // closes the database
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  // Stores `job` as given, every field (the server inserts it queued). A created_ms of 0 is stamped with the store's
  // clock, so that the queue and the list keep their order. Throws Error when a job with the same id exists. With
  // `max_queued` >= 0 it is stored only while fewer jobs than that are queued (checked in the same transaction);
  // returns whether it was stored.
  bool insert(const JobRecord& job, std::int64_t max_queued = -1);
  // Everything, including scenario, result_json and html; nullopt for an unknown id.
  std::optional<JobRecord> get(const std::string& id) const;
  // The oldest queued job (by created_ms, then insertion order) made running: started_ms = now, attempts + 1; the
  // whole record is returned, as it is now stored. Atomic with respect to other callers, including another process
  // on the same file: no job is claimed twice. nullopt when nothing is queued.
  std::optional<JobRecord> claim_next();
  // Records a running job's progress, clamped to [0, 1] (NaN counts as 0); nothing for a job that is not running.
  void set_progress(const std::string& id, double progress);
  // running -> done (progress 1, finished_ms = now) or -> failed (finished_ms = now). A job that is no longer
  // running (cancelled meanwhile) or unknown is left as it is and the call returns false: the worker drops its
  // result.
  bool finish(const std::string& id, const std::string& result_json, const std::string& html,
              const std::string& trace = "");
  bool fail(const std::string& id, const std::string& error, const std::string& error_key);
  // queued or running -> cancelled (finished_ms = now); false for a finished or unknown job. A running job's worker
  // learns it when its finish() or fail() returns false (or by polling get()).
  bool cancel(const std::string& id);
  // At start-up, after a crash or a kill: running -> queued with progress 0 and started_ms 0 (attempts kept, so a
  // job that keeps killing the server can be recognised). Returns how many. Call it before any worker starts: a job
  // a live worker is running would be queued again.
  int requeue_running();

  struct ListQuery {
    std::optional<JobState> state;  // only jobs in this state; none = every state
    std::string text;               // case-insensitive (ASCII letters) substring of id, label or command; empty = all
    int limit = 50;                 // clamped to 1..500
    int offset = 0;                 // negative counts as 0
  };
  // Newest first (created_ms descending, then insertion order descending). The rows carry no scenario, result_json
  // or html (empty strings: the list stays small); `total` is how many jobs match without limit and offset.
  struct ListPage {
    std::vector<JobRecord> jobs;
    std::int64_t total = 0;
  };
  ListPage list(const ListQuery& q) const;
  std::int64_t count(JobState s) const;
  // The wall time of each done or failed job in seconds (finished_ms - started_ms, never negative), oldest first, for
  // the /metrics histogram. Jobs never started are left out.
  std::vector<double> finished_durations_s() const;
  // Deletes the finished jobs (done, failed, cancelled) whose finished_ms is before `before_ms`; returns how many.
  // The file keeps its size (SQLite reuses the freed pages for new jobs).
  int purge_finished_before(std::int64_t before_ms);
  // The store's clock (the one given, else the system's), in Unix epoch milliseconds: what created_ms and
  // finished_ms are measured on.
  std::int64_t now_ms() const;

  const std::string& path() const { return path_; }

 private:
  struct Closer {
    void operator()(sqlite3* db) const;
  };
  void configure();
  void open_schema();

  std::string path_;
  std::function<std::int64_t()> clock_;
  mutable std::mutex mutex_;  // guards db_: one statement at a time, from any thread
  std::unique_ptr<sqlite3, Closer> db_;
};

}  // namespace trainsim::service
