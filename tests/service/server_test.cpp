// `trainsim serve` end to end over loopback (docs/service.md): each command submitted, polled and fetched; the
// errors a client gets (400 naming the key, 401, 404, 409, 413, 429); cancelling; jobs that survive a restart.
#include <gtest/gtest.h>

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/tiny_scenario.hpp"

#include "service/job_store.hpp"
#include "service/server.hpp"
#include "trainsim/errors.hpp"
#include "trainsim/scenario.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim::service {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const char* const kTiny = trainsim::test::kTinyScenario;

const char* kClusterOnly = R"(cluster:
  gpu: H100-SXM
  num_gpus: 16
  gpus_per_node: 8
  nics_per_node: 8
  nic_gbps: 400
)";

// A server on a free loopback port with its own data directory, serving on a thread for the test's length. A
// directory it names itself starts empty and goes with it: process ids come round again (32,768 of them), and a job
// store left by an earlier process of the same id would hold that process's jobs.
class TestServer {
 public:
  explicit TestServer(ServerOptions o = {}, const std::string& dir = "") {
    owns_dir_ = dir.empty();
    dir_ = owns_dir_ ? (fs::temp_directory_path() /
                        ("trainsim-serve-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++)))
                           .string()
                     : dir;
    if (owns_dir_) fs::remove_all(dir_);
    o.data_dir = dir_;
    o.port = 0;
    server_ = std::make_unique<Server>(o);
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->run(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client_->set_read_timeout(60, 0);
  }
  ~TestServer() {
    server_->stop();
    thread_.join();
    std::error_code ignored;
    if (owns_dir_) fs::remove_all(dir_, ignored);
  }
  httplib::Client& client() { return *client_; }
  const std::string& dir() const { return dir_; }
  void stop() {
    server_->stop();
    thread_.join();
    thread_ = std::thread([] {});
  }

  json submit(const std::string& command, const std::string& scenario, const json& options = json::object(),
              const std::vector<std::string>& overrides = {}, int expect = 202) {
    const json body{{"command", command},
                    {"scenario", scenario},
                    {"label", "job.yaml"},
                    {"options", options},
                    {"overrides", overrides}};
    const auto res = client_->Post("/api/jobs", body.dump(), "application/json");
    EXPECT_TRUE(res);
    if (!res) return {};
    EXPECT_EQ(res->status, expect) << res->body;
    return json::parse(res->body);
  }

  // Polls until the job is finished; its last state.
  json wait(const std::string& id) {
    for (int i = 0; i < 1200; ++i) {
      const auto res = client_->Get("/api/jobs/" + id);
      if (res && res->status == 200) {
        const json j = json::parse(res->body);
        const std::string state = j["state"];
        if (state == "done" || state == "failed" || state == "cancelled") return j;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "job " << id << " did not finish";
    return {};
  }

  // Polls the job until it is in `state` (true) or `seconds` have passed (false).
  bool wait_for_state(const std::string& id, const std::string& state, double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
      const auto res = client_->Get("/api/jobs/" + id);
      if (res && res->status == 200 && json::parse(res->body)["state"] == state) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  json result(const std::string& id) {
    const auto res = client_->Get("/api/jobs/" + id + "/result");
    EXPECT_TRUE(res);
    if (!res) return {};
    EXPECT_EQ(res->status, 200) << res->body;
    return json::parse(res->body);
  }

 private:
  static inline int counter_ = 0;
  std::string dir_;
  bool owns_dir_ = false;
  std::unique_ptr<Server> server_;
  int port_ = 0;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

TEST(Serve, EveryCommandSubmittedPolledAndFetched) {
  TestServer s;
  const json run = s.submit("run", kTiny);
  ASSERT_TRUE(run.contains("id"));
  EXPECT_EQ(run["state"], "queued");
  const json memory = s.submit("memory", kTiny);
  const json nccl = s.submit("nccl-test", kClusterOnly, {{"op", "all_reduce"}, {"minbytes", "1M"}, {"maxbytes", "4M"}});
  const json sweep =
      s.submit("sweep", kTiny, {{"vary", {"cluster.nic_gbps=100,400"}}, {"tokens", "1e9"}, {"objective", "days"}},
               {"training.resilience.storage_GBps=100"});
  const json tune = s.submit("tune", kTiny, {{"space", {"parallelism.tensor=1,2"}}, {"top", 2}});
  const json plan = s.submit("plan", kTiny, {{"iterations", "1000"}}, {"training.resilience.storage_GBps=100"});

  const json done = s.wait(run["id"]);
  EXPECT_EQ(done["state"], "done") << done.dump();
  EXPECT_EQ(done["attempts"], 1);
  EXPECT_GT(done["finished_ms"].get<std::int64_t>(), 0);
  const json r = s.result(run["id"]);
  EXPECT_GT(r["iteration_time_s"].get<double>(), 0);
  const auto html = s.client().Get("/api/jobs/" + run["id"].get<std::string>() + "/html");
  ASSERT_TRUE(html);
  EXPECT_EQ(html->status, 200);
  EXPECT_NE(html->body.find("<html"), std::string::npos);
  const auto scenario = s.client().Get("/api/jobs/" + run["id"].get<std::string>() + "/scenario");
  ASSERT_TRUE(scenario);
  EXPECT_EQ(scenario->body, kTiny);

  for (const json* j : {&memory, &nccl, &sweep, &tune, &plan}) {
    const json d = s.wait((*j)["id"]);
    EXPECT_EQ(d["state"], "done") << d.dump();
  }
  EXPECT_TRUE(s.result(memory["id"]).contains("stages"));
  EXPECT_EQ(s.result(nccl["id"])["rows"].size(), 3u);  // 1, 2 and 4 MiB
  const json swept = s.result(sweep["id"]);
  EXPECT_EQ(swept["points"].size(), 2u);
  EXPECT_GT(swept["points"][0]["result"]["run_plan"]["days"].get<double>(), 0);  // the whole run, planned
  EXPECT_EQ(swept["objective"]["name"], "days");
  EXPECT_TRUE(swept["objective"]["best_point"].is_number());
  EXPECT_FALSE(s.result(tune["id"])["ranked"].empty());
  EXPECT_GT(s.result(plan["id"])["wall_days"].get<double>(), 0);
  // A result that is not a run has no page.
  EXPECT_EQ(s.client().Get("/api/jobs/" + memory["id"].get<std::string>() + "/html")->status, 404);

  // The list: newest first, filtered by state and text.
  const auto list = s.client().Get("/api/jobs?state=done&limit=2");
  ASSERT_TRUE(list);
  const json page = json::parse(list->body);
  EXPECT_EQ(page["total"], 6);
  ASSERT_EQ(page["jobs"].size(), 2u);
  EXPECT_EQ(page["jobs"][0]["id"], plan["id"]);
  EXPECT_EQ(json::parse(s.client().Get("/api/jobs?q=sweep")->body)["total"], 1);
  EXPECT_EQ(s.client().Get("/api/jobs?state=sleeping")->status, 400);
}

// A run submitted with options.trace keeps its Chrome trace: the job links it and /trace serves it; a run without
// has none (404 saying how to get one).
TEST(Serve, ARunSubmittedWithTraceServesIt) {
  TestServer s;
  const json traced = s.submit("run", kTiny, {{"trace", true}});
  const json plain = s.submit("run", kTiny);
  ASSERT_EQ(s.wait(traced["id"])["state"], "done");
  ASSERT_EQ(s.wait(plain["id"])["state"], "done");
  const std::string base = "/api/jobs/" + traced["id"].get<std::string>();
  const json job = json::parse(s.client().Get(base)->body);
  EXPECT_EQ(job["links"]["trace"], base + "/trace") << job.dump();
  const auto trace = s.client().Get(base + "/trace");
  ASSERT_TRUE(trace);
  EXPECT_EQ(trace->status, 200);
  const json events = json::parse(trace->body);
  ASSERT_TRUE(events.contains("traceEvents"));
  EXPECT_GT(events["traceEvents"].size(), 10u);
  const auto none = s.client().Get("/api/jobs/" + plain["id"].get<std::string>() + "/trace");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 404);
  EXPECT_NE(none->body.find("options.trace"), std::string::npos) << none->body;
  EXPECT_FALSE(
      json::parse(s.client().Get("/api/jobs/" + plain["id"].get<std::string>())->body)["links"].contains("trace"));
  // A trace above the server's limit fails the job before it is built, naming the option.
  ServerOptions small;
  small.limits.max_trace_bytes = 1000;
  TestServer t(small);
  const json refused = t.wait(t.submit("run", kTiny, {{"trace", true}})["id"]);
  EXPECT_EQ(refused["state"], "failed") << refused.dump();
  EXPECT_EQ(refused["key"], "options.trace") << refused.dump();
}

// --keep-days: a server starting on a data directory deletes the finished jobs older than that (counted in
// /metrics) and keeps the recent ones and every queued one; a bad value names the flag.
TEST(Serve, KeepDaysPurgesOldFinishedJobsAtStart) {
  const std::string dir = (fs::temp_directory_path() / ("trainsim-serve-keep-" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    JobStore store((fs::path(dir) / "jobs.sqlite").string());
    const std::int64_t now = store.now_ms(), day = 86'400'000;
    const auto job = [&](const std::string& id, JobState state, std::int64_t finished_ms) {
      JobRecord j;
      j.id = id;
      j.command = "run";
      j.label = "job.yaml";
      j.scenario = kTiny;
      j.options_json = "{}";
      j.state = state;
      j.created_ms = finished_ms - 1000;
      j.finished_ms = finished_ms;
      store.insert(j);
    };
    job("0000000000000001", JobState::Done, now - 10 * day);
    job("0000000000000002", JobState::Failed, now - 8 * day);
    job("0000000000000003", JobState::Done, now - 1 * day);
    job("0000000000000004", JobState::Queued, 0);
  }
  ServerOptions o;
  o.keep_days = 7;
  o.workers = 0;
  TestServer s(o, dir);
  EXPECT_EQ(s.client().Get("/api/jobs/0000000000000001")->status, 404);
  EXPECT_EQ(s.client().Get("/api/jobs/0000000000000002")->status, 404);
  EXPECT_EQ(s.client().Get("/api/jobs/0000000000000003")->status, 200);
  EXPECT_EQ(s.client().Get("/api/jobs/0000000000000004")->status, 200);
  EXPECT_NE(s.client().Get("/metrics")->body.find("trainsim_jobs_purged_total 2"), std::string::npos);
  s.stop();
  ServerOptions bad;
  bad.keep_days = -1;
  bad.data_dir = dir;
  try {
    Server server(bad);
    ADD_FAILURE() << "accepted --keep-days -1";
  } catch (const ScenarioError& e) { EXPECT_EQ(e.key(), "--keep-days"); }
  fs::remove_all(dir);
}

TEST(Serve, BadRequestsAreRefusedWithTheKey) {
  ServerOptions o;
  o.limits.max_gpus = 64;
  TestServer s(o);
  json e = s.submit("run", std::string(kTiny) + "  bogus_key: 1\n", {}, {}, 400);
  EXPECT_EQ(e["key"], "cluster.bogus_key") << e.dump();
  e = s.submit("run", kTiny, {}, {"parallelism.tensor=0"}, 400);
  EXPECT_EQ(e["key"], "parallelism.tensor") << e.dump();
  EXPECT_NE(e["error"].get<std::string>().find("parallelism.tensor"), std::string::npos);
  EXPECT_EQ(e["error"].get<std::string>().find(s.dir()), std::string::npos) << "the server's paths stay private";
  e = s.submit("fly", kTiny, {}, {}, 400);
  EXPECT_EQ(e["key"], "command");
  e = s.submit("run", kTiny, {{"verbose", true}}, {}, 400);
  EXPECT_EQ(e["key"], "options.verbose");
  e = s.submit("plan", kTiny, {}, {}, 400);
  EXPECT_EQ(e["key"], "options.tokens");
  e = s.submit("run", kTiny, {}, {"cluster.num_gpus=128", "training.global_batch_size=128"}, 400);
  EXPECT_EQ(e["key"], "cluster.num_gpus");
  e = s.submit("sweep", kTiny, {{"vary", {"cluster.nic_gbps=100:2000:1"}}}, {}, 400);
  EXPECT_EQ(e["key"], "options.vary");
  e = s.submit("sweep", kTiny, {{"vary", {"cluster.nic_gbps=100,400"}}, {"tokens", "lots"}}, {}, 400);
  EXPECT_EQ(e["key"], "options.tokens") << e.dump();
  e = s.submit("tune", kTiny, {{"objective", "days"}}, {}, 400);
  EXPECT_EQ(e["key"], "options.tokens") << e.dump();
  // Files: only an upload's bare name, and nothing written.
  e = s.submit("run", kTiny, {}, {"compute.database=/etc/passwd"}, 400);
  EXPECT_EQ(e["key"], "compute.database");
  e = s.submit("run", kTiny, {}, {"compute.database=../jobs.sqlite"}, 400);
  EXPECT_EQ(e["key"], "compute.database");
  e = s.submit("run", kTiny, {}, {"output.trace=/tmp/x.json"}, 400);
  EXPECT_EQ(e["key"], "output.trace");
  e = s.submit("run", kTiny, {}, {"nccl.NCCL_GRAPH_FILE=/etc/graph.xml"}, 400);
  EXPECT_EQ(e["key"], "nccl.NCCL_GRAPH_FILE");
  e = s.submit("run", kTiny, {}, {"nccl.NCCL_TOPO_DUMP_FILE=topo.xml"}, 400);
  EXPECT_EQ(e["key"], "nccl.NCCL_TOPO_DUMP_FILE");
  // Not JSON; unknown job; unknown route.
  const auto bad = s.client().Post("/api/jobs", "{not json", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(s.client().Get("/api/jobs/0123456789abcdef")->status, 404);
  EXPECT_EQ(s.client().Get("/api/nothing")->status, 404);
  // Nothing was queued.
  EXPECT_EQ(json::parse(s.client().Get("/api/jobs")->body)["total"], 0);
}

TEST(Serve, OversizedBodyIs413AndFullQueueIs429) {
  ServerOptions o;
  o.max_body_bytes = 2048;
  o.max_queue = 2;
  o.workers = 0;  // nothing runs: the queue fills
  TestServer s(o);
  const auto big = s.client().Post("/api/jobs", std::string(4096, ' '), "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  s.submit("run", kTiny);
  s.submit("run", kTiny);
  const json e = s.submit("run", kTiny, {}, {}, 429);
  EXPECT_NE(e["error"].get<std::string>().find("queue is full"), std::string::npos);
}

// A job past the server's wall-time limit stops at its next progress step and fails saying why; a run's first step
// (its work estimate) comes before any simulation, so a limit already passed stops every run there.
TEST(Serve, AJobPastTheTimeLimitFails) {
  ServerOptions o;
  o.limits.max_wall_s = 1e-9;
  TestServer s(o);
  const json d = s.wait(s.submit("run", kTiny)["id"]);
  EXPECT_EQ(d["state"], "failed");
  EXPECT_NE(d["error"].get<std::string>().find("this server's limit for one job"), std::string::npos) << d.dump();
  EXPECT_TRUE(d["key"].is_null());
}

// Labels are file names: no control characters, not "." or "..".
TEST(Serve, ALabelMustBeAFileName) {
  TestServer s;
  for (const char* label : {"..", "a/..", "bad\nname", ""}) {
    const json body{{"command", "memory"}, {"scenario", kTiny}, {"label", label}};
    const auto res = s.client().Post("/api/jobs", body.dump(), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << label;
    EXPECT_EQ(json::parse(res->body)["key"], "label") << label;
  }
}

TEST(Serve, CancelAQueuedJobOnce) {
  ServerOptions o;
  o.workers = 0;
  TestServer s(o);
  const std::string id = s.submit("run", kTiny)["id"];
  auto res = s.client().Delete("/api/jobs/" + id);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(s.client().Get("/api/jobs/" + id)->body)["state"], "cancelled");
  EXPECT_EQ(s.client().Delete("/api/jobs/" + id)->status, 409);
  EXPECT_EQ(s.client().Get("/api/jobs/" + id + "/result")->status, 409);
}

TEST(Serve, TokensAreRequiredWhenConfigured) {
  const fs::path tokens = fs::temp_directory_path() / ("trainsim-tokens-" + std::to_string(::getpid()));
  std::ofstream(tokens) << "# team tokens\nsecret-one\n  secret-two  \n";
  ServerOptions o;
  o.token_file = tokens.string();
  o.bind = "127.0.0.1";
  TestServer s(o);
  const json body{{"command", "memory"}, {"scenario", kTiny}};
  auto res = s.client().Post("/api/jobs", body.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(s.client().Get("/api/jobs")->status, 401);
  EXPECT_EQ(s.client().Get("/metrics")->status, 401);
  EXPECT_EQ(s.client().Get("/api/health")->status, 200);  // for load balancers
  EXPECT_EQ(s.client().Get("/")->status, 200);            // the page asks for the token itself
  s.client().set_bearer_token_auth("secret-on");
  EXPECT_EQ(s.client().Get("/api/jobs")->status, 401);
  s.client().set_bearer_token_auth("secret-two");
  res = s.client().Post("/api/jobs", body.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 202);
  fs::remove(tokens);
}

// A restart finds the queued jobs and those that were running (after a crash) and runs them; finished results stay.
TEST(Serve, JobsSurviveARestart) {
  const std::string dir = (fs::temp_directory_path() / ("trainsim-restart-" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);  // another process of the same id may have left its jobs there
  std::vector<std::string> ids;
  std::string finished;
  {
    ServerOptions o;
    TestServer s(o, dir);
    finished = s.submit("memory", kTiny)["id"];
    s.wait(finished);
  }
  {
    ServerOptions o;
    o.workers = 0;
    TestServer s(o, dir);
    for (int i = 0; i < 5; ++i)
      ids.push_back(s.submit("run", kTiny, {}, {"cluster.nic_gbps=" + std::to_string(100 * (i + 1))})["id"]);
  }
  {
    // A worker took the first job and the server died before it finished: the job is left running.
    JobStore store((fs::path(dir) / "jobs.sqlite").string());
    const auto taken = store.claim_next();
    ASSERT_TRUE(taken);
    EXPECT_EQ(taken->id, ids.front());
  }
  ServerOptions o;
  o.workers = 2;
  TestServer s(o, dir);
  EXPECT_EQ(s.wait(finished)["state"], "done");
  double last = 0;
  for (const std::string& id : ids) {
    const json d = s.wait(id);
    EXPECT_EQ(d["state"], "done") << d.dump();
    EXPECT_EQ(d["attempts"], id == ids.front() ? 2 : 1);
    const double t = s.result(id)["iteration_time_s"];
    EXPECT_GT(t, 0);
    if (last > 0) {
      EXPECT_LE(t, last * 1.0000001);  // faster NICs, no slower iteration
    }
    last = t;
  }
  fs::remove_all(dir);
}

TEST(Serve, CompareTwoRuns) {
  TestServer s;
  const std::string a = s.submit("run", kTiny)["id"];
  const std::string b = s.submit("run", kTiny, {}, {"cluster.nic_gbps=100", "parallelism.tensor=1"})["id"];
  s.wait(a);
  s.wait(b);
  const auto res = s.client().Get("/api/compare?a=" + a + "&b=" + b);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json c = json::parse(res->body);
  EXPECT_EQ(c["a"]["id"], a);
  bool found = false;
  for (const json& row : c["fields"])
    if (row["name"] == "iteration_time_s") {
      found = true;
      EXPECT_NEAR(row["change"].get<double>(), row["b"].get<double>() / row["a"].get<double>() - 1, 1e-12);
    }
  EXPECT_TRUE(found);
  EXPECT_FALSE(c["breakdown"].empty());
  EXPECT_EQ(s.client().Get("/api/compare?a=" + a + "&b=ffffffffffffffff")->status, 404);
}

TEST(Serve, HealthMetricsPresetsAndPage) {
  TestServer s;
  s.submit("memory", kTiny);
  const json h = json::parse(s.client().Get("/api/health")->body);
  EXPECT_EQ(h["status"], "ok");
  EXPECT_EQ(h["workers"], 1);
  const auto m = s.client().Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("# TYPE trainsim_jobs_queued gauge"), std::string::npos);
  EXPECT_NE(m->body.find("trainsim_jobs_submitted_total 1"), std::string::npos);
  EXPECT_NE(m->body.find("trainsim_job_duration_seconds_bucket{le=\"+Inf\"}"), std::string::npos);
  const json p = json::parse(s.client().Get("/api/presets")->body);
  EXPECT_FALSE(p["models"].empty());
  EXPECT_FALSE(p["gpus"].empty());
  EXPECT_NE(p["example"].get<std::string>().find("preset:"), std::string::npos);
  const auto page = s.client().Get("/");
  ASSERT_TRUE(page);
  EXPECT_NE(page->body.find("<!DOCTYPE html>"), std::string::npos);
}

TEST(Serve, UploadedFilesAreNamedByContent) {
  TestServer s;
  const auto a = s.client().Post("/api/files?name=db.csv", "kernel,time\n", "application/octet-stream");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, 201);
  const std::string name = json::parse(a->body)["name"];
  EXPECT_EQ(name.size(), 64u + 4u);  // SHA-256 hex + ".csv"
  EXPECT_TRUE(fs::exists(fs::path(s.dir()) / "files" / name));
  const auto b = s.client().Post("/api/files?name=again.csv", "kernel,time\n", "application/octet-stream");
  EXPECT_EQ(json::parse(b->body)["name"], name);
}

// A job names an uploaded file by the name the upload gave (here NCCL's topology of a DGX H100 node): it runs as
// the same scenario with the file's own path does.
TEST(Serve, AJobUsesAnUploadedFile) {
  TestServer s;
  const std::string xml_path = std::string(TRAINSIM_SOURCE_DIR) + "/data/topologies/dgx-h100.xml";
  std::ifstream in(xml_path);
  std::stringstream xml;
  xml << in.rdbuf();
  ASSERT_FALSE(xml.str().empty());
  const auto up = s.client().Post("/api/files?name=dgx-h100.xml", xml.str(), "application/xml");
  ASSERT_TRUE(up);
  ASSERT_EQ(up->status, 201) << up->body;
  const std::string name = json::parse(up->body)["name"];
  const json job = s.submit("run", kTiny, json::object(), {"nccl.NCCL_TOPO_FILE=" + name});
  ASSERT_EQ(s.wait(job["id"])["state"], "done");
  const json served = s.result(job["id"]);
  const trainsim::RunOutput local =
      trainsim::run_scenario(trainsim::parse_scenario(kTiny, "job.yaml", {"nccl.NCCL_TOPO_FILE=" + xml_path}));
  EXPECT_DOUBLE_EQ(served["iteration_time_s"].get<double>(), local.result.iteration_time_s);
  // The name is looked up among the uploads: a job naming one never uploaded is refused at submission, naming the key.
  const json missing =
      s.submit("run", kTiny, json::object(), {"nccl.NCCL_TOPO_FILE=" + std::string(64, 'a') + ".xml"}, 400);
  EXPECT_EQ(missing["key"], "nccl.NCCL_TOPO_FILE") << missing.dump();
  EXPECT_NE(missing["error"].get<std::string>().find("no uploaded file"), std::string::npos) << missing.dump();
  EXPECT_EQ(missing["error"].get<std::string>().find(s.dir()), std::string::npos) << "the server's paths stay private";
}

// Cancelling a running job stops it between its steps (a sweep between points): it ends cancelled with no result,
// and the worker goes on to the next job.
TEST(Serve, CancelARunningJob) {
  ServerOptions o;
  o.workers = 1;
  TestServer s(o);
  const std::string id = s.submit("sweep", kTiny, {{"vary", {"cluster.nic_gbps=100:999:1"}}})["id"];
  ASSERT_TRUE(s.wait_for_state(id, "running", 30));
  const auto res = s.client().Delete("/api/jobs/" + id);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  const json ended = s.wait(id);
  EXPECT_EQ(ended["state"], "cancelled") << ended.dump();
  EXPECT_LT(ended["progress"].get<double>(), 1.0);
  EXPECT_EQ(s.client().Get("/api/jobs/" + id + "/result")->status, 409);
  const json next = s.submit("memory", kTiny);
  EXPECT_EQ(s.wait(next["id"])["state"], "done");
}

// A second server on a port in use is refused (no SO_REUSEPORT sharing), naming --port.
TEST(Serve, APortInUseIsRefused) {
  const fs::path dir = fs::temp_directory_path() / ("trainsim-port-" + std::to_string(::getpid()));
  ServerOptions o;
  o.data_dir = dir.string();
  o.port = 0;
  Server first(o);
  o.port = first.bind();
  o.data_dir = (dir / "second").string();
  Server second(o);
  try {
    second.bind();
    ADD_FAILURE() << "bound a port in use";
  } catch (const ScenarioError& e) { EXPECT_EQ(e.key(), "--port"); }
  fs::remove_all(dir);
}

TEST(Serve, YamlBodyWithQueryParameters) {
  TestServer s;
  const auto res =
      s.client().Post("/api/jobs?command=memory&label=mine.yaml&set=parallelism.tensor%3D1", kTiny, "application/yaml");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 202) << res->body;
  const json j = json::parse(res->body);
  EXPECT_EQ(j["label"], "mine.yaml");
  EXPECT_EQ(s.wait(j["id"])["state"], "done");
}

}  // namespace
}  // namespace trainsim::service
