// The job store of `trainsim serve`: what goes in comes out, the queue hands each job to one worker in order, the
// state machine refuses late results, and a file database survives its JobStore (a server restart).
#include <gtest/gtest.h>

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "service/job_store.hpp"
#include "support/error_of.hpp"

namespace trainsim::service {
namespace {

namespace fs = std::filesystem;
using trainsim::test::error_of;

// A directory of its own for one test, removed with it; unique per process and test.
class JobStoreTempDir {
 public:
  JobStoreTempDir()
      : path_(fs::temp_directory_path() / ("trainsim-job-store-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~JobStoreTempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  JobStoreTempDir(const JobStoreTempDir&) = delete;
  JobStoreTempDir& operator=(const JobStoreTempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// A clock the test moves by hand.
struct JobStoreTestClock {
  std::int64_t now_ms = 1'000;
  std::function<std::int64_t()> fn() {
    return [this] { return now_ms; };
  }
};

JobRecord queued_test_job(const std::string& id, std::int64_t created_ms, const std::string& command = "run",
                          const std::string& label = "job.yaml") {
  JobRecord job;
  job.id = id;
  job.command = command;
  job.label = label;
  job.scenario = "model: {preset: gpt3-175b}\n# " + id + "\n";
  job.options_json = R"({"overrides":[],"options":{}})";
  job.created_ms = created_ms;
  return job;
}

// Runs `sql` on the file through a connection of its own, as another program (or a hand edit) would.
void exec_on_job_file(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  const std::string text = message ? message : "";
  sqlite3_free(message);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << text;
}

TEST(JobState, NamesRoundTripAndFinishedStates) {
  for (JobState s : {JobState::Queued, JobState::Running, JobState::Done, JobState::Failed, JobState::Cancelled})
    EXPECT_EQ(job_state_named(to_string(s)), s);
  EXPECT_STREQ(to_string(JobState::Queued), "queued");
  EXPECT_STREQ(to_string(JobState::Running), "running");
  EXPECT_STREQ(to_string(JobState::Done), "done");
  EXPECT_STREQ(to_string(JobState::Failed), "failed");
  EXPECT_STREQ(to_string(JobState::Cancelled), "cancelled");
  EXPECT_EQ(job_state_named("Queued"), std::nullopt);  // the API's names are lower case, exactly
  EXPECT_EQ(job_state_named(""), std::nullopt);
  EXPECT_EQ(job_state_named("canceled"), std::nullopt);
  EXPECT_FALSE(is_finished(JobState::Queued));
  EXPECT_FALSE(is_finished(JobState::Running));
  EXPECT_TRUE(is_finished(JobState::Done));
  EXPECT_TRUE(is_finished(JobState::Failed));
  EXPECT_TRUE(is_finished(JobState::Cancelled));
}

TEST(JobStore, InsertAndGetKeepEveryField) {
  JobStore store(":memory:");
  JobRecord job;
  job.id = "0123456789abcdef";
  job.command = "nccl-test";
  job.label = "Łódź \"quoted\" 'single' 日本語 🚀.yaml";
  job.scenario = "name: 'it''s'\nmodel:\n  preset: \"gpt3\"\n# ; DROP TABLE jobs; --\n";
  job.options_json = R"({"overrides":["parallelism.tensor=8"],"options":{"threads":4}})";
  job.state = JobState::Failed;
  job.progress = 0.625;
  job.created_ms = 1'700'000'000'123;
  job.started_ms = 1'700'000'001'000;
  job.finished_ms = 1'700'000'009'999;
  job.attempts = 3;
  job.result_json = R"({"rows":[)" + std::string(3'000'000, 'x') + "]}";  // a large sweep's output
  job.html = "<html><body>\"é\" & 'ü'</body></html>";
  job.error = "parallelism.tensor: 8 does not divide 12 heads";
  job.error_key = "parallelism.tensor";
  store.insert(job);

  const std::optional<JobRecord> back = store.get(job.id);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->id, job.id);
  EXPECT_EQ(back->command, job.command);
  EXPECT_EQ(back->label, job.label);
  EXPECT_EQ(back->scenario, job.scenario);
  EXPECT_EQ(back->options_json, job.options_json);
  EXPECT_EQ(back->state, JobState::Failed);
  EXPECT_EQ(back->progress, 0.625);
  EXPECT_EQ(back->created_ms, job.created_ms);
  EXPECT_EQ(back->started_ms, job.started_ms);
  EXPECT_EQ(back->finished_ms, job.finished_ms);
  EXPECT_EQ(back->attempts, 3);
  EXPECT_EQ(back->result_json.size(), job.result_json.size());
  EXPECT_TRUE(back->result_json == job.result_json);  // not EXPECT_EQ: a failure would print 3 MB
  EXPECT_EQ(back->html, job.html);
  EXPECT_EQ(back->error, job.error);
  EXPECT_EQ(back->error_key, job.error_key);

  EXPECT_EQ(store.get("ffffffffffffffff"), std::nullopt);
  EXPECT_EQ(store.get("0123456789ABCDEF"), std::nullopt);  // ids compare exactly
  EXPECT_EQ(store.get("' OR 1=1 --"), std::nullopt);
}

TEST(JobStore, EmptyFieldsAndAZeroCreationTimeRoundTrip) {
  JobStoreTestClock clock;
  clock.now_ms = 42'000;
  JobStore store(":memory:", clock.fn());
  JobRecord job;
  job.id = "a";
  store.insert(job);
  const std::optional<JobRecord> back = store.get("a");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->command, "");
  EXPECT_EQ(back->scenario, "");
  EXPECT_EQ(back->state, JobState::Queued);
  EXPECT_EQ(back->created_ms, 42'000);  // stamped by the store's clock
  EXPECT_EQ(back->started_ms, 0);
  EXPECT_EQ(back->attempts, 0);
}

TEST(JobStore, DuplicateIdThrowsAndKeepsTheFirstJob) {
  JobStore store(":memory:");
  store.insert(queued_test_job("00000000000000aa", 1, "run", "first.yaml"));
  const std::string message =
      error_of([&] { store.insert(queued_test_job("00000000000000aa", 2, "tune", "second.yaml")); });
  EXPECT_NE(message.find("00000000000000aa"), std::string::npos) << message;
  EXPECT_NE(message.find("exists"), std::string::npos) << message;
  EXPECT_EQ(store.get("00000000000000aa")->label, "first.yaml");
  EXPECT_EQ(store.list({}).total, 1);
}

TEST(JobStore, ClaimNextTakesTheOldestQueuedJobAndStartsIt) {
  JobStoreTestClock clock;
  JobStore store(":memory:", clock.fn());
  EXPECT_EQ(store.claim_next(), std::nullopt);
  store.insert(queued_test_job("late", 300));
  store.insert(queued_test_job("early-1", 100));
  store.insert(queued_test_job("middle", 200));
  store.insert(queued_test_job("early-2", 100));  // same millisecond as early-1, inserted after it
  JobRecord done = queued_test_job("finished-oldest", 50);
  done.state = JobState::Done;
  store.insert(done);
  store.insert(queued_test_job("cancelled-oldest", 10));
  ASSERT_TRUE(store.cancel("cancelled-oldest"));

  std::vector<std::string> order;
  for (std::int64_t t = 5'000;; t += 1'000) {
    clock.now_ms = t;
    const std::optional<JobRecord> job = store.claim_next();
    if (!job) break;
    order.push_back(job->id);
    EXPECT_EQ(job->state, JobState::Running);
    EXPECT_EQ(job->started_ms, t);
    EXPECT_EQ(job->attempts, 1);
    EXPECT_EQ(job->scenario, "model: {preset: gpt3-175b}\n# " + job->id + "\n");  // the worker needs it
    const std::optional<JobRecord> stored = store.get(job->id);
    ASSERT_TRUE(stored.has_value());
    EXPECT_EQ(stored->state, JobState::Running);
    EXPECT_EQ(stored->started_ms, t);
    EXPECT_EQ(stored->attempts, 1);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"early-1", "early-2", "middle", "late"}));
  EXPECT_EQ(store.claim_next(), std::nullopt);  // running jobs are not handed out again
  EXPECT_EQ(store.count(JobState::Running), 4);
}

// Workers on several threads share one store; every job goes to exactly one of them.
TEST(JobStore, ConcurrentClaimsTakeEachJobOnce) {
  JobStore store(":memory:");
  constexpr int kJobs = 200;
  for (int i = 0; i < kJobs; ++i) store.insert(queued_test_job("job-" + std::to_string(i), i + 1));
  std::vector<std::vector<std::string>> claimed(4);
  std::vector<std::thread> workers;
  for (auto& mine : claimed) {
    workers.emplace_back([&store, &mine] {
      while (const std::optional<JobRecord> job = store.claim_next()) mine.push_back(job->id);
    });
  }
  for (auto& w : workers) w.join();
  std::multiset<std::string> all;
  for (const auto& mine : claimed) all.insert(mine.begin(), mine.end());
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kJobs));
  for (int i = 0; i < kJobs; ++i) EXPECT_EQ(all.count("job-" + std::to_string(i)), 1U) << i;
  EXPECT_EQ(store.count(JobState::Running), kJobs);
  EXPECT_EQ(store.count(JobState::Queued), 0);
}

// Two JobStore objects on one file are two SQLite connections, as two processes would have: the claim is still
// atomic (one UPDATE), and a busy writer makes the other wait rather than fail.
TEST(JobStore, ClaimsFromTwoConnectionsOnOneFileTakeEachJobOnce) {
  const JobStoreTempDir dir;
  const std::string path = dir.file("jobs.db");
  JobStore a(path);
  JobStore b(path);
  constexpr int kJobs = 200;
  for (int i = 0; i < kJobs; ++i) (i % 2 ? a : b).insert(queued_test_job("job-" + std::to_string(i), i + 1));
  std::vector<std::string> from_a, from_b;
  std::thread ta([&] {
    while (const std::optional<JobRecord> job = a.claim_next()) from_a.push_back(job->id);
  });
  std::thread tb([&] {
    while (const std::optional<JobRecord> job = b.claim_next()) from_b.push_back(job->id);
  });
  ta.join();
  tb.join();
  std::multiset<std::string> all(from_a.begin(), from_a.end());
  all.insert(from_b.begin(), from_b.end());
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kJobs));
  for (int i = 0; i < kJobs; ++i) EXPECT_EQ(all.count("job-" + std::to_string(i)), 1U) << i;
  EXPECT_EQ(a.count(JobState::Running), kJobs);
}

TEST(JobStore, FinishFailAndCancelOnlyFromTheirStates) {
  JobStoreTestClock clock;
  JobStore store(":memory:", clock.fn());
  for (const char* id : {"a", "b", "c", "d"}) store.insert(queued_test_job(id, 1));

  // A queued job cannot finish or fail, nor take progress.
  EXPECT_FALSE(store.finish("a", "{}", ""));
  EXPECT_FALSE(store.fail("a", "boom", ""));
  store.set_progress("a", 0.5);
  EXPECT_EQ(store.get("a")->state, JobState::Queued);
  EXPECT_EQ(store.get("a")->progress, 0);

  clock.now_ms = 2'000;
  ASSERT_EQ(store.claim_next()->id, "a");
  store.set_progress("a", 0.25);
  EXPECT_EQ(store.get("a")->progress, 0.25);
  store.set_progress("a", 7);
  EXPECT_EQ(store.get("a")->progress, 1);
  store.set_progress("a", -3);
  EXPECT_EQ(store.get("a")->progress, 0);
  store.set_progress("a", std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(store.get("a")->progress, 0);
  clock.now_ms = 3'500;
  EXPECT_TRUE(store.finish("a", R"({"step_time_s":1.5})", "<html/>"));
  JobRecord a = *store.get("a");
  EXPECT_EQ(a.state, JobState::Done);
  EXPECT_EQ(a.progress, 1);
  EXPECT_EQ(a.finished_ms, 3'500);
  EXPECT_EQ(a.result_json, R"({"step_time_s":1.5})");
  EXPECT_EQ(a.html, "<html/>");
  EXPECT_FALSE(store.finish("a", "{}", ""));  // once done, done
  EXPECT_FALSE(store.fail("a", "late", ""));
  EXPECT_FALSE(store.cancel("a"));
  EXPECT_EQ(store.get("a")->result_json, R"({"step_time_s":1.5})");
  EXPECT_EQ(store.get("a")->state, JobState::Done);

  ASSERT_EQ(store.claim_next()->id, "b");
  clock.now_ms = 4'000;
  EXPECT_TRUE(store.fail("b", "parallelism.tensor: 3 does not divide 8 GPUs", "parallelism.tensor"));
  JobRecord b = *store.get("b");
  EXPECT_EQ(b.state, JobState::Failed);
  EXPECT_EQ(b.finished_ms, 4'000);
  EXPECT_EQ(b.error, "parallelism.tensor: 3 does not divide 8 GPUs");
  EXPECT_EQ(b.error_key, "parallelism.tensor");
  EXPECT_FALSE(store.finish("b", "{}", ""));
  EXPECT_FALSE(store.cancel("b"));

  // Cancelling a running job: the worker's result arrives too late and is dropped.
  ASSERT_EQ(store.claim_next()->id, "c");
  store.set_progress("c", 0.5);
  clock.now_ms = 5'000;
  EXPECT_TRUE(store.cancel("c"));
  clock.now_ms = 6'000;
  EXPECT_FALSE(store.finish("c", R"({"late":true})", "<html/>"));
  EXPECT_FALSE(store.fail("c", "late", ""));
  store.set_progress("c", 0.9);
  JobRecord c = *store.get("c");
  EXPECT_EQ(c.state, JobState::Cancelled);
  EXPECT_EQ(c.finished_ms, 5'000);
  EXPECT_EQ(c.result_json, "");
  EXPECT_EQ(c.html, "");
  EXPECT_EQ(c.progress, 0.5);
  EXPECT_FALSE(store.cancel("c"));

  // Cancelling a queued job: no worker will claim it.
  EXPECT_TRUE(store.cancel("d"));
  EXPECT_EQ(store.get("d")->state, JobState::Cancelled);
  EXPECT_EQ(store.get("d")->finished_ms, 6'000);
  EXPECT_EQ(store.claim_next(), std::nullopt);

  EXPECT_FALSE(store.cancel("unknown"));
  EXPECT_FALSE(store.finish("unknown", "{}", ""));
  EXPECT_FALSE(store.fail("unknown", "x", ""));
  store.set_progress("unknown", 0.5);  // nothing to update, no error
}

// A restart: the jobs are in the file, and the one a dead worker was running is queued again.
TEST(JobStore, JobsSurviveReopeningAndRunningOnesAreRequeued) {
  const JobStoreTempDir dir;
  const std::string path = dir.file("jobs.db");
  JobStoreTestClock clock;
  {
    JobStore store(path, clock.fn());
    EXPECT_EQ(store.requeue_running(), 0);
    store.insert(queued_test_job("first", 1));
    store.insert(queued_test_job("second", 2));
    store.insert(queued_test_job("third", 3));
    clock.now_ms = 2'000;
    ASSERT_EQ(store.claim_next()->id, "first");
    ASSERT_EQ(store.claim_next()->id, "second");
    store.set_progress("first", 0.75);
    ASSERT_TRUE(store.finish("second", R"({"ok":1})", ""));
  }
  {
    JobStore store(path, clock.fn());
    JobRecord first = *store.get("first");
    EXPECT_EQ(first.state, JobState::Running);
    EXPECT_EQ(first.progress, 0.75);
    EXPECT_EQ(store.get("second")->result_json, R"({"ok":1})");

    EXPECT_EQ(store.requeue_running(), 1);
    first = *store.get("first");
    EXPECT_EQ(first.state, JobState::Queued);
    EXPECT_EQ(first.progress, 0);
    EXPECT_EQ(first.started_ms, 0);
    EXPECT_EQ(first.attempts, 1);  // kept
    EXPECT_EQ(store.get("second")->state, JobState::Done);
    EXPECT_EQ(store.get("third")->state, JobState::Queued);
    EXPECT_EQ(store.requeue_running(), 0);

    clock.now_ms = 9'000;
    const std::optional<JobRecord> again = store.claim_next();
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->id, "first");  // still the oldest
    EXPECT_EQ(again->attempts, 2);
    EXPECT_EQ(again->started_ms, 9'000);
  }
  // The file is in WAL mode for every later connection too (journal_mode = WAL persists in the file).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "wal");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

class JobStoreList : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.insert(queued_test_job("1111aaaa00000001", 100, "run", "gpt3-175b.yaml"));
    store_.insert(queued_test_job("1111aaaa00000002", 200, "sweep", "llama3-70b-sweep.yaml"));
    store_.insert(queued_test_job("2222bbbb00000003", 300, "nccl-test", "allreduce.yaml"));
    store_.insert(queued_test_job("2222bbbb00000004", 300, "tune", "GPT3-tune.yaml"));  // same ms, inserted later
    store_.insert(queued_test_job("3333cccc00000005", 500, "memory", "50%_off.yaml"));
    JobRecord done = queued_test_job("3333cccc00000006", 600, "plan", "plan.yaml");
    done.state = JobState::Done;
    done.result_json = R"({"big":"result"})";
    done.html = "<html/>";
    done.error = "";
    store_.insert(done);
    JobRecord failed = queued_test_job("4444dddd00000007", 700, "run", "broken.yaml");
    failed.state = JobState::Failed;
    failed.error = "model.preset: unknown preset";
    failed.error_key = "model.preset";
    store_.insert(failed);
  }
  static std::vector<std::string> ids(const JobStore::ListPage& page) {
    std::vector<std::string> out;
    for (const JobRecord& j : page.jobs) out.push_back(j.id);
    return out;
  }
  JobStore store_{":memory:"};
};

TEST_F(JobStoreList, NewestFirstWithoutTheLargeFields) {
  const JobStore::ListPage page = store_.list({});
  EXPECT_EQ(page.total, 7);
  EXPECT_EQ(ids(page),
            (std::vector<std::string>{"4444dddd00000007", "3333cccc00000006", "3333cccc00000005", "2222bbbb00000004",
                                      "2222bbbb00000003", "1111aaaa00000002", "1111aaaa00000001"}));
  for (const JobRecord& j : page.jobs) {
    EXPECT_EQ(j.scenario, "") << j.id;
    EXPECT_EQ(j.result_json, "") << j.id;
    EXPECT_EQ(j.html, "") << j.id;
    EXPECT_EQ(j.options_json, R"({"overrides":[],"options":{}})") << j.id;
  }
  EXPECT_EQ(page.jobs[0].state, JobState::Failed);
  EXPECT_EQ(page.jobs[0].error, "model.preset: unknown preset");
  EXPECT_EQ(page.jobs[0].error_key, "model.preset");
  EXPECT_EQ(page.jobs[0].label, "broken.yaml");
  EXPECT_EQ(page.jobs[0].command, "run");
  EXPECT_EQ(page.jobs[0].created_ms, 700);
  EXPECT_EQ(store_.get("3333cccc00000006")->result_json, R"({"big":"result"})");  // get still has everything
}

TEST_F(JobStoreList, FiltersByStateAndText) {
  JobStore::ListQuery q;
  q.state = JobState::Queued;
  EXPECT_EQ(store_.list(q).total, 5);
  EXPECT_EQ(ids(store_.list(q)).front(), "3333cccc00000005");
  q.state = JobState::Done;
  EXPECT_EQ(ids(store_.list(q)), (std::vector<std::string>{"3333cccc00000006"}));
  q.state = JobState::Running;
  EXPECT_EQ(store_.list(q).total, 0);
  EXPECT_TRUE(store_.list(q).jobs.empty());

  q = {};
  q.text = "gpt3";  // label, either case
  EXPECT_EQ(ids(store_.list(q)), (std::vector<std::string>{"2222bbbb00000004", "1111aaaa00000001"}));
  q.text = "GPT3";
  EXPECT_EQ(store_.list(q).total, 2);
  q.text = "BBBB";  // id
  EXPECT_EQ(ids(store_.list(q)), (std::vector<std::string>{"2222bbbb00000004", "2222bbbb00000003"}));
  q.text = "Nccl-";  // command
  EXPECT_EQ(ids(store_.list(q)), (std::vector<std::string>{"2222bbbb00000003"}));
  q.text = "%";  // not a LIKE pattern: only the label that holds a '%'
  EXPECT_EQ(ids(store_.list(q)), (std::vector<std::string>{"3333cccc00000005"}));
  q.text = "_";
  EXPECT_EQ(ids(store_.list(q)), (std::vector<std::string>{"3333cccc00000005"}));
  q.text = "' OR '1'='1";
  EXPECT_EQ(store_.list(q).total, 0);
  q.text = "nothing like it";
  EXPECT_EQ(store_.list(q).total, 0);

  q.text = "run";
  q.state = JobState::Failed;  // both filters at once
  EXPECT_EQ(ids(store_.list(q)), (std::vector<std::string>{"4444dddd00000007"}));
}

TEST_F(JobStoreList, PagesCountTheWholeMatch) {
  JobStore::ListQuery q;
  q.limit = 2;
  q.offset = 2;
  JobStore::ListPage page = store_.list(q);
  EXPECT_EQ(page.total, 7);
  EXPECT_EQ(ids(page), (std::vector<std::string>{"3333cccc00000005", "2222bbbb00000004"}));
  q.offset = 6;
  EXPECT_EQ(ids(store_.list(q)), (std::vector<std::string>{"1111aaaa00000001"}));
  q.offset = 100;
  page = store_.list(q);
  EXPECT_TRUE(page.jobs.empty());
  EXPECT_EQ(page.total, 7);
  q.offset = -5;  // counts as 0
  EXPECT_EQ(ids(store_.list(q)), (std::vector<std::string>{"4444dddd00000007", "3333cccc00000006"}));
  q.offset = 0;
  q.limit = 0;  // at least one row
  EXPECT_EQ(store_.list(q).jobs.size(), 1U);
  q.limit = -1;
  EXPECT_EQ(store_.list(q).jobs.size(), 1U);
  q.state = JobState::Queued;
  q.limit = 2;
  q.offset = 1;
  page = store_.list(q);
  EXPECT_EQ(page.total, 5);
  EXPECT_EQ(ids(page), (std::vector<std::string>{"2222bbbb00000004", "2222bbbb00000003"}));
}

TEST(JobStore, ListReturnsAtMost500Rows) {
  JobStore store(":memory:");
  for (int i = 0; i < 520; ++i) store.insert(queued_test_job("job-" + std::to_string(i), i + 1));
  JobStore::ListQuery q;
  q.limit = 100'000;
  const JobStore::ListPage page = store.list(q);
  EXPECT_EQ(page.total, 520);
  ASSERT_EQ(page.jobs.size(), 500U);
  EXPECT_EQ(page.jobs.front().id, "job-519");
  EXPECT_EQ(page.jobs.back().id, "job-20");
  EXPECT_EQ(store.list({}).jobs.size(), 50U);  // the default page
}

TEST(JobStore, CountsJobsPerState) {
  JobStore store(":memory:");
  for (int i = 0; i < 6; ++i) store.insert(queued_test_job("job-" + std::to_string(i), i + 1));
  store.claim_next();
  store.claim_next();
  store.claim_next();
  ASSERT_TRUE(store.finish("job-0", "{}", ""));
  ASSERT_TRUE(store.fail("job-1", "boom", ""));
  ASSERT_TRUE(store.cancel("job-5"));
  EXPECT_EQ(store.count(JobState::Queued), 2);
  EXPECT_EQ(store.count(JobState::Running), 1);
  EXPECT_EQ(store.count(JobState::Done), 1);
  EXPECT_EQ(store.count(JobState::Failed), 1);
  EXPECT_EQ(store.count(JobState::Cancelled), 1);
}

TEST(JobStore, FinishedDurationsAreThoseOfDoneAndFailedJobs) {
  JobStoreTestClock clock;
  JobStore store(":memory:", clock.fn());
  EXPECT_TRUE(store.finished_durations_s().empty());
  for (const char* id : {"done", "failed", "cancelled", "running", "queued"}) store.insert(queued_test_job(id, 1));
  clock.now_ms = 10'000;
  store.claim_next();  // done
  clock.now_ms = 11'000;
  store.claim_next();  // failed
  store.claim_next();  // cancelled
  store.claim_next();  // running
  clock.now_ms = 12'500;
  ASSERT_TRUE(store.finish("done", "{}", ""));
  clock.now_ms = 11'250;
  ASSERT_TRUE(store.fail("failed", "boom", ""));
  ASSERT_TRUE(store.cancel("cancelled"));
  const std::vector<double> durations = store.finished_durations_s();
  ASSERT_EQ(durations.size(), 2U);
  EXPECT_DOUBLE_EQ(durations[0], 0.25);  // failed, finished first
  EXPECT_DOUBLE_EQ(durations[1], 2.5);   // done
}

TEST(JobStore, PurgeDeletesOnlyFinishedJobsOlderThanTheCutoff) {
  JobStoreTestClock clock;
  JobStore store(":memory:", clock.fn());
  for (const char* id : {"done-old", "failed-old", "cancelled-old", "running-old", "done-new", "queued-old"})
    store.insert(queued_test_job(id, 1));
  clock.now_ms = 1'000;
  for (int i = 0; i < 5; ++i) store.claim_next();
  ASSERT_TRUE(store.finish("done-old", "{}", ""));
  ASSERT_TRUE(store.fail("failed-old", "boom", ""));
  clock.now_ms = 1'999;
  ASSERT_TRUE(store.cancel("cancelled-old"));
  clock.now_ms = 2'000;
  ASSERT_TRUE(store.finish("done-new", "{}", ""));  // finished exactly at the cutoff: kept

  EXPECT_EQ(store.purge_finished_before(2'000), 3);
  EXPECT_EQ(store.get("done-old"), std::nullopt);
  EXPECT_EQ(store.get("failed-old"), std::nullopt);
  EXPECT_EQ(store.get("cancelled-old"), std::nullopt);
  EXPECT_TRUE(store.get("running-old").has_value());
  EXPECT_TRUE(store.get("queued-old").has_value());
  EXPECT_TRUE(store.get("done-new").has_value());
  EXPECT_EQ(store.list({}).total, 3);
  EXPECT_EQ(store.purge_finished_before(2'000), 0);
  EXPECT_EQ(store.purge_finished_before(2'001), 1);
  // A job inserted after a purge still sorts after the survivors.
  store.insert(queued_test_job("after-purge", 1));
  EXPECT_EQ(store.claim_next()->id, "queued-old");
  EXPECT_EQ(store.claim_next()->id, "after-purge");
}

TEST(JobStore, OpeningInAMissingDirectoryNamesThePath) {
  const JobStoreTempDir dir;
  const std::string path = dir.file("no/such/dir/jobs.db");
  const std::string message = error_of([&] { JobStore store(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("unable to open"), std::string::npos) << message;  // SQLite's own words
}

TEST(JobStore, OpeningAFileThatIsNotADatabaseThrows) {
  const JobStoreTempDir dir;
  const std::string path = dir.file("garbage.db");
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 8192; ++i) out.put(static_cast<char>((i * 37 + 11) % 256));
  }
  const std::string message = error_of([&] { JobStore store(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("not a database"), std::string::npos) << message;
  EXPECT_EQ(fs::file_size(path), 8192U);  // left as it was
}

TEST(JobStore, AnotherProgramsDatabaseIsRefusedAndLeftAlone) {
  const JobStoreTempDir dir;
  const std::string path = dir.file("other.db");
  exec_on_job_file(path, "CREATE TABLE customers (name TEXT)");
  const std::string message = error_of([&] { JobStore store(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("not a trainsim job database"), std::string::npos) << message;
  // Nothing was added to it (the schema transaction was rolled back): opening it with the sqlite3 shell would show
  // only the customers.
  exec_on_job_file(path, "CREATE TABLE jobs (x INTEGER)");  // would fail had the store created its `jobs`
}

TEST(JobStore, ADatabaseOfANewerSchemaIsRefused) {
  const JobStoreTempDir dir;
  const std::string path = dir.file("jobs.db");
  { JobStore store(path); }
  exec_on_job_file(path, "UPDATE trainsim_job_store SET version = 99");
  const std::string message = error_of([&] { JobStore store(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("newer trainsim"), std::string::npos) << message;
  EXPECT_NE(message.find("99"), std::string::npos) << message;
}

// Only the store writes states: one it does not know is a bug (or a hand edit), reported as an InternalError by
// every reader rather than read as some state.
TEST(JobStore, AnUnknownStateInTheFileIsAnInternalError) {
  const JobStoreTempDir dir;
  const std::string path = dir.file("jobs.db");
  JobStore store(path);
  store.insert(queued_test_job("odd", 1));
  exec_on_job_file(path, "UPDATE jobs SET state = 'paused' WHERE id = 'odd'");
  const std::string message = error_of<InternalError>([&] { store.get("odd"); });
  EXPECT_NE(message.find("paused"), std::string::npos) << message;
  EXPECT_THROW(store.list({}), InternalError);
  EXPECT_EQ(store.count(JobState::Queued), 0);
  EXPECT_EQ(store.claim_next(), std::nullopt);  // not queued, so not claimed
}

// A file written by the first schema (no trace column) opens: its jobs keep every field, the column is added
// empty, the version becomes 2, and a finished run can then keep its trace.
TEST(JobStore, AVersionOneFileGainsTheTraceColumn) {
  const JobStoreTempDir dir;
  const std::string path = dir.file("jobs.db");
  exec_on_job_file(path, R"sql(
CREATE TABLE trainsim_job_store (version INTEGER NOT NULL);
INSERT INTO trainsim_job_store (version) VALUES (1);
CREATE TABLE jobs (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, command TEXT NOT NULL, label TEXT NOT NULL,
  scenario TEXT NOT NULL, options_json TEXT NOT NULL, state TEXT NOT NULL, progress REAL NOT NULL,
  created_ms INTEGER NOT NULL, started_ms INTEGER NOT NULL, finished_ms INTEGER NOT NULL, attempts INTEGER NOT NULL,
  result_json TEXT NOT NULL, html TEXT NOT NULL, error TEXT NOT NULL, error_key TEXT NOT NULL);
INSERT INTO jobs (id, command, label, scenario, options_json, state, progress, created_ms, started_ms, finished_ms,
  attempts, result_json, html, error, error_key)
  VALUES ('old', 'run', 'a.yaml', 'model: {}', '{}', 'done', 1, 5, 6, 7, 1, '{"x":1}', '<html/>', '', '');
)sql");
  JobStore store(path);
  const auto old = store.get("old");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->result_json, R"({"x":1})");
  EXPECT_EQ(old->html, "<html/>");
  EXPECT_EQ(old->trace, "");
  store.insert(queued_test_job("new", 10));
  ASSERT_TRUE(store.claim_next());
  ASSERT_TRUE(store.finish("new", "{}", "<html/>", R"({"traceEvents":[]})"));
  EXPECT_EQ(store.get("new")->trace, R"({"traceEvents":[]})");
  const std::string message = error_of([&] {
    exec_on_job_file(path, "UPDATE trainsim_job_store SET version = 3");
    JobStore again(path);
  });
  EXPECT_NE(message.find("newer trainsim"), std::string::npos) << message;
}

// A bounded insert counts the queued jobs in its own transaction: from many threads at once, exactly the bound's
// number of jobs get in, and running or finished ones do not count.
TEST(JobStore, ABoundedInsertNeverOvershootsTheQueue) {
  const JobStoreTempDir dir;
  JobStore store(dir.file("jobs.db"));
  store.insert(queued_test_job("running", 1));
  ASSERT_TRUE(store.claim_next());
  std::atomic<int> stored{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i)
        if (store.insert(queued_test_job("job-" + std::to_string(t) + "-" + std::to_string(i), 10 + i), 25)) ++stored;
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(stored.load(), 25);
  EXPECT_EQ(store.count(JobState::Queued), 25);
  EXPECT_TRUE(store.insert(queued_test_job("unbounded", 99)));  // no bound given: always stored
}

}  // namespace
}  // namespace trainsim::service
