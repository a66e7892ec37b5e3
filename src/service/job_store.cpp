#include "service/job_store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "trainsim/errors.hpp"

namespace trainsim::service {
namespace {

// The layout below. A database with a higher number was written by a newer trainsim and is refused rather than
// misread; a change of layout raises it and adds a migration to open_schema().
// 2: jobs.trace (a run's Chrome trace). A version-1 file gains the column, empty, when a server opens it.
constexpr std::int64_t kJobStoreSchemaVersion = 2;

// `seq` (the rowid) is the insertion order: created_ms alone ties for jobs submitted in the same millisecond. The
// state names are to_string(JobState)'s, written only by this file. The indexes serve the queue (oldest queued job),
// the per-state counts and filtered lists, and the unfiltered list (newest first).
constexpr const char* kJobStoreSchema = R"sql(
CREATE TABLE trainsim_job_store (version INTEGER NOT NULL);
CREATE TABLE jobs (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  command TEXT NOT NULL,
  label TEXT NOT NULL,
  scenario TEXT NOT NULL,
  options_json TEXT NOT NULL,
  state TEXT NOT NULL,
  progress REAL NOT NULL,
  created_ms INTEGER NOT NULL,
  started_ms INTEGER NOT NULL,
  finished_ms INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  result_json TEXT NOT NULL,
  html TEXT NOT NULL,
  error TEXT NOT NULL,
  error_key TEXT NOT NULL,
  trace TEXT NOT NULL DEFAULT ''
);
CREATE INDEX jobs_by_state ON jobs (state, created_ms, seq);
CREATE INDEX jobs_by_created ON jobs (created_ms, seq);
)sql";

// Every column of a JobRecord, in the order read_job_row() reads them. The list leaves out the large ones but keeps
// their places, so that one reader serves both.
constexpr const char* kJobFullColumns =
    "id, command, label, scenario, options_json, state, progress, created_ms, started_ms, finished_ms, attempts, "
    "result_json, html, error, error_key, trace";
constexpr const char* kJobSummaryColumns =
    "id, command, label, '', options_json, state, progress, created_ms, started_ms, finished_ms, attempts, "
    "'', '', error, error_key, ''";

[[noreturn]] void throw_job_store_error(sqlite3* db, const std::string& path, std::string_view what) {
  throw Error(fmt::format("job database {}: {}: {}", path, what, sqlite3_errmsg(db)));
}

// A prepared statement, finalized however the scope is left. Values are bound, never spliced into the SQL text.
// Errors become trainsim::Error naming the database, the operation (`what`) and SQLite's message.
class JobStoreStatement {
 public:
  JobStoreStatement(sqlite3* db, const std::string& path, std::string what, std::string_view sql)
      : db_(db), path_(path), what_(std::move(what)) {
    if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK)
      throw_job_store_error(db_, path_, what_);
  }
  ~JobStoreStatement() { sqlite3_finalize(stmt_); }
  JobStoreStatement(const JobStoreStatement&) = delete;
  JobStoreStatement& operator=(const JobStoreStatement&) = delete;

  // SQLITE_TRANSIENT: SQLite copies the text, so the argument need not outlive the statement. A null pointer
  // (an empty string_view) would bind SQL NULL, which the NOT NULL columns refuse: it is bound as "".
  void bind_text(int index, std::string_view text) {
    const char* data = text.data() != nullptr ? text.data() : "";
    check_bind(sqlite3_bind_text64(stmt_, index, data, text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void bind_int(int index, std::int64_t value) { check_bind(sqlite3_bind_int64(stmt_, index, value)); }
  void bind_real(int index, double value) { check_bind(sqlite3_bind_double(stmt_, index, value)); }
  void bind_text(const char* name, std::string_view text) { bind_text(parameter(name), text); }
  void bind_int(const char* name, std::int64_t value) { bind_int(parameter(name), value); }

  // SQLite's result code of the next step, for a caller that tells some failures apart (a duplicate id).
  int step_code() { return sqlite3_step(stmt_); }
  // true with a row to read, false when the statement is done; throws on any error (SQLITE_BUSY after the busy
  // timeout included).
  bool step() {
    const int rc = step_code();
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail();
    return false;
  }
  // Runs a statement to its end; returns how many rows it changed.
  int run() {
    while (step()) {}
    return sqlite3_changes(db_);
  }
  [[noreturn]] void fail() const { throw_job_store_error(db_, path_, what_); }

  // NULL (not written by this code, but a file may be edited) reads as "" and 0.
  std::string text(int column) const {
    const unsigned char* data = sqlite3_column_text(stmt_, column);  // before _bytes: it may convert the value
    if (data == nullptr) return {};
    return {reinterpret_cast<const char*>(data), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))};
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }

 private:
  void check_bind(int rc) const {
    if (rc != SQLITE_OK) fail();
  }
  int parameter(const char* name) const {
    const int index = sqlite3_bind_parameter_index(stmt_, name);
    TRAINSIM_CHECK(index > 0, fmt::format("job store SQL has no parameter {} ({})", name, what_));
    return index;
  }

  sqlite3* db_;
  const std::string& path_;
  std::string what_;
  sqlite3_stmt* stmt_ = nullptr;
};

// A statement without parameters or rows that matter (pragmas, transactions, the schema).
void exec_job_store_sql(sqlite3* db, const std::string& path, std::string_view what, const char* sql) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) throw_job_store_error(db, path, what);
}

// A progress the worker computed: kept in [0, 1]; NaN (which SQLite would store as NULL) is 0.
double clamped_job_progress(double progress) {
  if (!(progress > 0)) return 0;
  return progress < 1 ? progress : 1;
}

// A row of kJobFullColumns or kJobSummaryColumns.
JobRecord read_job_row(const JobStoreStatement& row) {
  JobRecord job;
  job.id = row.text(0);
  job.command = row.text(1);
  job.label = row.text(2);
  job.scenario = row.text(3);
  job.options_json = row.text(4);
  const std::string state = row.text(5);
  const std::optional<JobState> parsed = job_state_named(state);
  // Only this file writes states, always to_string's names: another is a bug (or a hand-edited file).
  TRAINSIM_CHECK(parsed.has_value(), fmt::format("job {} has the unknown state '{}' in the job store", job.id, state));
  job.state = *parsed;
  job.progress = row.real(6);
  job.created_ms = row.integer(7);
  job.started_ms = row.integer(8);
  job.finished_ms = row.integer(9);
  job.attempts = static_cast<int>(row.integer(10));
  job.result_json = row.text(11);
  job.html = row.text(12);
  job.error = row.text(13);
  job.error_key = row.text(14);
  job.trace = row.text(15);
  return job;
}

}  // namespace

void JobStore::Closer::operator()(sqlite3* db) const {
  // _v2: a statement left unfinalized (none should be) delays the close instead of failing it.
  sqlite3_close_v2(db);
}

JobStore::JobStore(const std::string& path, std::function<std::int64_t()> clock)
    : path_(path), clock_(std::move(clock)) {
  sqlite3* db = nullptr;
  // NOMUTEX: mutex_ already serialises every use of the connection.
  const int rc =
      sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  db_.reset(db);  // closed on every path, the failed open's handle included
  if (rc != SQLITE_OK) {
    throw Error(fmt::format("cannot open the job database {}: {}", path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
  }
  configure();
  open_schema();
}

JobStore::~JobStore() = default;

std::int64_t JobStore::now_ms() const {
  if (clock_) return clock_();
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count();
}

void JobStore::configure() {
  sqlite3* db = db_.get();
  sqlite3_extended_result_codes(db, 1);  // SQLITE_CONSTRAINT_UNIQUE rather than SQLITE_CONSTRAINT
  // Another process on the same file (a second server, the sqlite3 shell) may hold the write lock for a moment:
  // wait for it rather than fail at once.
  sqlite3_busy_timeout(db, 5000);
  // The first statements that read the file: a file that is not a database fails here ("file is not a database").
  // WAL lets readers (lists) go on while a worker writes, and with synchronous=FULL every commit is fsynced before it
  // returns, so an accepted job survives a power cut. (":memory:" keeps its "memory" journal; that is fine.)
  exec_job_store_sql(db, path_, "set the WAL journal", "PRAGMA journal_mode = WAL");
  exec_job_store_sql(db, path_, "set synchronous = FULL", "PRAGMA synchronous = FULL");
}

void JobStore::open_schema() {
  sqlite3* db = db_.get();
  // IMMEDIATE: two servers starting on one new file must not both create the tables.
  exec_job_store_sql(db, path_, "begin a transaction", "BEGIN IMMEDIATE");
  try {
    JobStoreStatement marker(db, path_, "read the schema",
                             "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'trainsim_job_store'");
    marker.step();
    if (marker.integer(0) > 0) {
      JobStoreStatement version(db, path_, "read the schema version", "SELECT MAX(version) FROM trainsim_job_store");
      version.step();
      const std::int64_t v = version.integer(0);
      if (v > kJobStoreSchemaVersion) {
        throw Error(fmt::format(
            "job database {} was written by a newer trainsim (schema version {}; this one reads version {})", path_, v,
            kJobStoreSchemaVersion));
      }
      if (v < 1) throw Error(fmt::format("job database {} has no valid schema version ({})", path_, v));
      if (v < 2) {  // version 1: no trace column yet
        exec_job_store_sql(db, path_, "add the trace column",
                           "ALTER TABLE jobs ADD COLUMN trace TEXT NOT NULL DEFAULT ''");
        JobStoreStatement upgraded(db, path_, "write the schema version",
                                   "INSERT INTO trainsim_job_store (version) VALUES (?1)");
        upgraded.bind_int(1, kJobStoreSchemaVersion);
        upgraded.run();
      }
    } else {
      JobStoreStatement tables(db, path_, "read the schema",
                               "SELECT COUNT(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'");
      tables.step();
      // Someone else's database: adding our tables to it would hide the mistake (a wrong --db path).
      if (tables.integer(0) > 0)
        throw Error(fmt::format("{} is not a trainsim job database: it holds other tables", path_));
      exec_job_store_sql(db, path_, "create the tables", kJobStoreSchema);
      JobStoreStatement version(db, path_, "write the schema version",
                                "INSERT INTO trainsim_job_store (version) VALUES (?1)");
      version.bind_int(1, kJobStoreSchemaVersion);
      version.run();
    }
    exec_job_store_sql(db, path_, "commit the schema", "COMMIT");
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);  // best effort: the error thrown says what went wrong
    throw;
  }
}

bool JobStore::insert(const JobRecord& job, std::int64_t max_queued) {
  const std::lock_guard lock(mutex_);
  const std::string what = "insert job " + job.id;
  // One statement: the count and the insert are one write transaction, so concurrent submissions (or a second
  // server on the file) cannot together pass the bound.
  JobStoreStatement s(db_.get(), path_, what,
                      fmt::format("INSERT INTO jobs ({}) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
                                  "?13, ?14, ?15, ?16 WHERE ?17 < 0 OR "
                                  "(SELECT COUNT(*) FROM jobs WHERE state = 'queued') < ?17",
                                  kJobFullColumns));
  s.bind_text(1, job.id);
  s.bind_text(2, job.command);
  s.bind_text(3, job.label);
  s.bind_text(4, job.scenario);
  s.bind_text(5, job.options_json);
  s.bind_text(6, to_string(job.state));
  s.bind_real(7, clamped_job_progress(job.progress));
  s.bind_int(8, job.created_ms != 0 ? job.created_ms : now_ms());
  s.bind_int(9, job.started_ms);
  s.bind_int(10, job.finished_ms);
  s.bind_int(11, job.attempts);
  s.bind_text(12, job.result_json);
  s.bind_text(13, job.html);
  s.bind_text(14, job.error);
  s.bind_text(15, job.error_key);
  s.bind_text(16, job.trace);
  s.bind_int(17, max_queued);
  const int rc = s.step_code();
  if (rc == SQLITE_CONSTRAINT_UNIQUE) {
    throw Error(fmt::format("job database {}: {}: a job with this id exists already", path_, what));
  }
  if (rc != SQLITE_DONE) s.fail();
  return sqlite3_changes(db_.get()) > 0;
}

std::optional<JobRecord> JobStore::get(const std::string& id) const {
  const std::lock_guard lock(mutex_);
  JobStoreStatement s(db_.get(), path_, "read job " + id,
                      fmt::format("SELECT {} FROM jobs WHERE id = ?1", kJobFullColumns));
  s.bind_text(1, id);
  if (!s.step()) return std::nullopt;
  return read_job_row(s);
}

std::optional<JobRecord> JobStore::claim_next() {
  const std::lock_guard lock(mutex_);
  // One statement, so the choice and the update are one write transaction: another connection (a second process)
  // cannot claim the same job in between.
  JobStoreStatement s(db_.get(), path_, "claim the next queued job",
                      fmt::format("UPDATE jobs SET state = 'running', started_ms = ?1, attempts = attempts + 1, "
                                  "progress = 0 WHERE seq = (SELECT seq FROM jobs WHERE state = 'queued' "
                                  "ORDER BY created_ms, seq LIMIT 1) RETURNING {}",
                                  kJobFullColumns));
  s.bind_int(1, now_ms());
  if (!s.step()) return std::nullopt;
  JobRecord job = read_job_row(s);
  s.run();  // to the end, so that the statement's transaction commits now
  return job;
}

void JobStore::set_progress(const std::string& id, double progress) {
  const std::lock_guard lock(mutex_);
  JobStoreStatement s(db_.get(), path_, "set the progress of job " + id,
                      "UPDATE jobs SET progress = ?2 WHERE id = ?1 AND state = 'running'");
  s.bind_text(1, id);
  s.bind_real(2, clamped_job_progress(progress));
  s.run();
}

bool JobStore::finish(const std::string& id, const std::string& result_json, const std::string& html,
                      const std::string& trace) {
  const std::lock_guard lock(mutex_);
  JobStoreStatement s(db_.get(), path_, "finish job " + id,
                      "UPDATE jobs SET state = 'done', progress = 1, finished_ms = ?2, result_json = ?3, html = ?4, "
                      "trace = ?5 WHERE id = ?1 AND state = 'running'");
  s.bind_text(1, id);
  s.bind_int(2, now_ms());
  s.bind_text(3, result_json);
  s.bind_text(4, html);
  s.bind_text(5, trace);
  return s.run() > 0;
}

bool JobStore::fail(const std::string& id, const std::string& error, const std::string& error_key) {
  const std::lock_guard lock(mutex_);
  JobStoreStatement s(db_.get(), path_, "record the failure of job " + id,
                      "UPDATE jobs SET state = 'failed', finished_ms = ?2, error = ?3, error_key = ?4 "
                      "WHERE id = ?1 AND state = 'running'");
  s.bind_text(1, id);
  s.bind_int(2, now_ms());
  s.bind_text(3, error);
  s.bind_text(4, error_key);
  return s.run() > 0;
}

bool JobStore::cancel(const std::string& id) {
  const std::lock_guard lock(mutex_);
  JobStoreStatement s(db_.get(), path_, "cancel job " + id,
                      "UPDATE jobs SET state = 'cancelled', finished_ms = ?2 "
                      "WHERE id = ?1 AND state IN ('queued', 'running')");
  s.bind_text(1, id);
  s.bind_int(2, now_ms());
  return s.run() > 0;
}

int JobStore::requeue_running() {
  const std::lock_guard lock(mutex_);
  JobStoreStatement s(db_.get(), path_, "requeue the running jobs",
                      "UPDATE jobs SET state = 'queued', progress = 0, started_ms = 0 WHERE state = 'running'");
  return s.run();
}

JobStore::ListPage JobStore::list(const ListQuery& q) const {
  // The filter is assembled from fixed fragments; the user's text and state are bound parameters. Leaving a
  // condition out (rather than `:state IS NULL OR ...`) lets SQLite use the (state, created_ms) index.
  std::string where;
  if (q.state) where += " AND state = :state";
  const std::string text = to_lower(q.text);  // lower() in SQLite folds ASCII letters only, as to_lower does
  if (!text.empty()) {
    where += " AND (instr(lower(id), :text) > 0 OR instr(lower(label), :text) > 0 OR instr(lower(command), :text) > 0)";
  }
  if (!where.empty()) where = " WHERE" + where.substr(4);  // drop the first " AND"
  const auto bind_filter = [&](JobStoreStatement& s) {
    if (q.state) s.bind_text(":state", to_string(*q.state));
    if (!text.empty()) s.bind_text(":text", text);
  };

  const std::lock_guard lock(mutex_);
  ListPage page;
  JobStoreStatement total(db_.get(), path_, "count the listed jobs", "SELECT COUNT(*) FROM jobs" + where);
  bind_filter(total);
  total.step();
  page.total = total.integer(0);

  JobStoreStatement rows(db_.get(), path_, "list the jobs",
                         fmt::format("SELECT {} FROM jobs{} ORDER BY created_ms DESC, seq DESC LIMIT :limit OFFSET "
                                     ":offset",
                                     kJobSummaryColumns, where));
  bind_filter(rows);
  rows.bind_int(":limit", std::clamp(q.limit, 1, 500));
  rows.bind_int(":offset", std::max(q.offset, 0));
  while (rows.step()) page.jobs.push_back(read_job_row(rows));
  return page;
}

std::int64_t JobStore::count(JobState s) const {
  const std::lock_guard lock(mutex_);
  JobStoreStatement c(db_.get(), path_, fmt::format("count the {} jobs", to_string(s)),
                      "SELECT COUNT(*) FROM jobs WHERE state = ?1");
  c.bind_text(1, to_string(s));
  c.step();
  return c.integer(0);
}

std::vector<double> JobStore::finished_durations_s() const {
  const std::lock_guard lock(mutex_);
  // MAX(.., 0): the system clock may step back between a job's start and its end.
  JobStoreStatement s(db_.get(), path_, "read the durations of the finished jobs",
                      "SELECT MAX(finished_ms - started_ms, 0) FROM jobs WHERE state IN ('done', 'failed') "
                      "AND started_ms > 0 ORDER BY finished_ms, seq");
  std::vector<double> durations;
  while (s.step()) durations.push_back(static_cast<double>(s.integer(0)) / 1000.0);
  return durations;
}

int JobStore::purge_finished_before(std::int64_t before_ms) {
  const std::lock_guard lock(mutex_);
  JobStoreStatement s(db_.get(), path_, "purge the finished jobs",
                      "DELETE FROM jobs WHERE state IN ('done', 'failed', 'cancelled') AND finished_ms < ?1");
  s.bind_int(1, before_ms);
  return s.run();
}

}  // namespace trainsim::service
