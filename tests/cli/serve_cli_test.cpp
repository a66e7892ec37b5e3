// `trainsim serve` as a process (docs/service.md): killed with SIGKILL while it works through 20 jobs, started again
// on the same data directory, it finishes every job, each with the result an uninterrupted run gives; what it says
// at start; its bad options.
#include <gtest/gtest.h>

#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/tiny_scenario.hpp"

#include "background_process.hpp"
#include "cli_support.hpp"
#include "trainsim/scenario.hpp"
#include "trainsim/trainsim.hpp"

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
using trainsim_cli_test::Background;
using trainsim_cli_test::wait_until;

const char* const kTiny = trainsim::test::kTinyScenario;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Starts `trainsim serve` on a free port over `dir`; the port it printed, or -1.
int start_server(Background*& server, const fs::path& dir) {
  const fs::path out = dir / "serve.out";
  fs::remove(out);
  server = new Background(std::string(TRAINSIM_BINARY) + " serve --port 0 --workers 1 --data " + dir.string() + " > " +
                          out.string() + " 2>&1");
  int port = -1;
  wait_until(
      [&] {
        std::smatch m;
        const std::string text = read_file(out);
        if (std::regex_search(text, m, std::regex(R"(http://127\.0\.0\.1:(\d+)/)"))) port = std::stoi(m[1]);
        return port > 0;
      },
      30);
  return port;
}

TEST(ServeCli, JobsSurviveKillNine) {
  const fs::path dir = fs::temp_directory_path() / ("trainsim_serve_kill_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Background* first = nullptr;
  const int port = start_server(first, dir);
  ASSERT_GT(port, 0) << read_file(dir / "serve.out");
  std::vector<std::string> ids;
  {
    httplib::Client c("127.0.0.1", port);
    for (int i = 0; i < 20; ++i) {
      const json body{
          {"command", "run"}, {"scenario", kTiny}, {"overrides", {"cluster.nic_gbps=" + std::to_string(100 + 25 * i)}}};
      const auto res = c.Post("/api/jobs", body.dump(), "application/json");
      ASSERT_TRUE(res);
      ASSERT_EQ(res->status, 202) << res->body;
      ids.push_back(json::parse(res->body)["id"]);
    }
    // Kill it once some jobs are done and others are not.
    ASSERT_TRUE(wait_until(
        [&] {
          const auto r = c.Get("/api/jobs?state=done&limit=1");
          return r && json::parse(r->body)["total"].get<int>() >= 2;
        },
        60));
  }
  first->stop();  // SIGKILL
  delete first;

  Background* second = nullptr;
  const int port2 = start_server(second, dir);
  ASSERT_GT(port2, 0) << read_file(dir / "serve.out");
  httplib::Client c("127.0.0.1", port2);
  ASSERT_TRUE(wait_until(
      [&] {
        const auto r = c.Get("/api/jobs?state=done&limit=1");
        return r && json::parse(r->body)["total"].get<int>() == 20;
      },
      120))
      << c.Get("/api/jobs?limit=20")->body;
  for (int i = 0; i < 20; ++i) {
    const auto r = c.Get("/api/jobs/" + ids[static_cast<std::size_t>(i)] + "/result");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
    const double served = json::parse(r->body)["iteration_time_s"];
    const trainsim::Scenario s = trainsim::load_scenario(trainsim::ScenarioSource::from_text(kTiny, "tiny.yaml"),
                                                         {"cluster.nic_gbps=" + std::to_string(100 + 25 * i)});
    EXPECT_DOUBLE_EQ(served, trainsim::run_scenario(s).result.iteration_time_s) << "job " << i;
  }
  delete second;
  fs::remove_all(dir);
}

TEST(ServeCli, StartupSaysWhereAndWhoMayConnect) {
  const fs::path dir = fs::temp_directory_path() / ("trainsim_serve_start_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Background* server = nullptr;
  ASSERT_GT(start_server(server, dir), 0);
  const std::string out = read_file(dir / "serve.out");
  EXPECT_NE(out.find("no --token-file"), std::string::npos) << out;
  EXPECT_NE(out.find("127.0.0.1 only"), std::string::npos) << out;
  delete server;
  // Bad options are refused with the option's name.
  const auto r = trainsim_cli_test::run("serve --workers 0 --data " + dir.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--workers"), std::string::npos) << r.out;
  const auto t = trainsim_cli_test::run("serve --token-file /nonexistent/tokens --data " + dir.string());
  EXPECT_EQ(t.status, 1);
  EXPECT_NE(t.out.find("--token-file"), std::string::npos) << t.out;
  fs::remove_all(dir);
}

}  // namespace
