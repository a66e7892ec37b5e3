// `trainsim serve` as a process (docs/service.md): killed with SIGKILL while it works through 20 jobs, started again
// on the same data directory, it finishes every job, each with the result an uninterrupted run gives; what it says
// at start; its bad options.
#include <gtest/gtest.h>

#include <httplib.h>
#include <openssl/evp.h>

#include <filesystem>
#include <memory>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/examples.hpp"
#include "support/tiny_scenario.hpp"

#include "background_process.hpp"
#include "chromium_devtools.hpp"
#include "cli_support.hpp"
#include "html_browser.hpp"
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

// Standard base64 (the screenshot the browser sends), by OpenSSL, less the padding's bytes.
std::string from_base64(const std::string& text) {
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return "";
  const std::size_t padding = text.ends_with("==") ? 2 : text.ends_with("=") ? 1 : 0;
  out.resize(static_cast<std::size_t>(n) - padding);
  return out;
}

// The page as a person uses it, in headless Chromium against a running server: the demo scenario pasted into the
// form and submitted, the job's page follows it to done and shows the run's numbers and its report; no console
// error or uncaught exception on the way; a screenshot of the result.
TEST(ServeCli, ThePageSubmitsTheDemoScenarioAndShowsItsReport) {
  const std::string browser = trainsim_cli_test::chromium();
  if (browser.empty()) GTEST_SKIP() << trainsim_cli_test::kNoChromium;
  const fs::path dir = fs::temp_directory_path() / ("trainsim_serve_page_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Background* server = nullptr;
  const int port = start_server(server, dir);
  const std::unique_ptr<Background> stop_server(server);
  ASSERT_GT(port, 0);

  trainsim_cli_test::ChromiumDevTools chrome(browser, dir);
  ASSERT_TRUE(chrome.started());
  const json target = chrome.call("Target.createTarget", {{"url", "about:blank"}});
  ASSERT_TRUE(target.contains("targetId")) << target.dump();
  const json attached = chrome.call("Target.attachToTarget", {{"targetId", target["targetId"]}, {"flatten", true}});
  ASSERT_TRUE(attached.contains("sessionId")) << attached.dump();
  const std::string page = attached["sessionId"];
  chrome.call("Runtime.enable", json::object(), page);
  chrome.call("Page.enable", json::object(), page);
  chrome.call("Inspector.enable", json::object(), page);  // for Inspector.targetCrashed
  chrome.call("Page.navigate", {{"url", "http://127.0.0.1:" + std::to_string(port) + "/"}}, page);
  const auto holds = [&](const std::string& expression, double seconds) {
    return trainsim_cli_test::wait_until([&] { return chrome.evaluate(page, expression) == true; }, seconds);
  };
  // What a failed check prints besides its own message: the page's state, the page's events that tell of trouble
  // (a crashed renderer, an exception, a console message), the ends of the browser's and the server's logs.
  const auto diagnosis = [&] {
    std::string text = "page: " + chrome
                                      .evaluate(page,
                                                "location.hash + ' | state: ' + "
                                                "document.getElementById('job-state').textContent + ' | message: ' + "
                                                "document.getElementById('message').textContent")
                                      .dump();
    std::string events;
    int crashes = 0, exceptions = 0, console = 0;
    for (const json& e : chrome.events()) {
      const std::string method = e.value("method", "");
      crashes += method == "Inspector.targetCrashed" || method == "Target.targetCrashed";
      exceptions += method == "Runtime.exceptionThrown";
      console += method == "Runtime.consoleAPICalled";
      if (method.ends_with("targetCrashed") || method == "Runtime.exceptionThrown" ||
          method == "Runtime.consoleAPICalled")
        events += "\n" + e.dump().substr(0, 600);
    }
    text += fmt::format(" | {} crashes, {} exceptions, {} console messages{}", crashes, exceptions, console, events);
    const auto tail = [](const std::string& log) { return log.substr(log.size() > 3000 ? log.size() - 3000 : 0); };
    return text + "\nchromium.log (end):\n" + tail(read_file(dir / "chromium.log")) + "\nserve.out (end):\n" +
           tail(read_file(dir / "serve.out"));
  };
  // The page is ready once it has filled in the example scenario (from /api/presets).
  ASSERT_TRUE(holds("document.getElementById('scenario').value.length > 0", 30)) << diagnosis();
  const std::string demo = read_file(trainsim::test::example("gpt3-175b-1024-h100.yaml"));
  ASSERT_FALSE(demo.empty());
  ASSERT_EQ(chrome.evaluate(page,
                            "document.getElementById('command').value = 'run'; "
                            "document.getElementById('label').value = 'gpt3-175b-1024-h100.yaml'; "
                            "document.getElementById('scenario').value = " +
                                json(demo).dump() + "; document.getElementById('submit').click(); true"),
            true);
  // The page says the job is queued and links its page; following the link, the address names the job, its state
  // reaches done, the numbers and the report appear.
  ASSERT_TRUE(holds("!!document.querySelector('#message a')", 30)) << diagnosis();
  EXPECT_EQ(chrome.evaluate(page, "document.getElementById('message').textContent.includes('queued')"), true);
  chrome.evaluate(page, "document.querySelector('#message a').click(); true");
  ASSERT_TRUE(holds("document.getElementById('job-state').textContent === 'done'", 90)) << diagnosis();
  EXPECT_EQ(chrome.evaluate(page, "/^#\\/job\\/[0-9a-f]{16}$/.test(location.hash)"), true)
      << chrome.evaluate(page, "location.hash").dump();
  ASSERT_TRUE(holds("document.querySelectorAll('#run-cards .card').length >= 3", 30)) << diagnosis();
  EXPECT_EQ(chrome.evaluate(page, "document.getElementById('run-cards').textContent.includes('iteration')"), true);
  EXPECT_EQ(chrome.evaluate(page, "!!document.getElementById('report-frame')"), true);
  const std::string job_id = chrome.evaluate(page, "location.hash.split('/')[2]").get<std::string>();
  // The same numbers as the API's result.
  const json iteration =
      chrome.evaluate(page,
                      "fetch('/api/jobs/' + location.hash.split('/')[2] + '/result').then(r => r.json()).then(j => "
                      "j.iteration_time_s)");
  ASSERT_TRUE(iteration.is_number()) << iteration.dump();
  EXPECT_GT(iteration.get<double>(), 1.0);

  // The report's frame has loaded the run's HTML report. Sandboxed, it usually runs in a process of its own, a target
  // of its own; where the browser keeps it in the page's process it is a child in the page's frame tree.
  const std::string report_path = "/api/jobs/" + job_id + "/html";
  const auto report_loaded = [&] {
    const json targets = chrome.call("Target.getTargets");
    for (const json& t : targets.value("targetInfos", json::array()))
      if (t.value("url", "").ends_with(report_path)) return true;
    const json tree = chrome.call("Page.getFrameTree", json::object(), page);
    for (const json& child : tree.value("frameTree", json::object()).value("childFrames", json::array()))
      if (child.value("frame", json::object()).value("url", "").ends_with(report_path)) return true;
    return false;
  };
  EXPECT_TRUE(trainsim_cli_test::wait_until(report_loaded, 30))
      << chrome.call("Target.getTargets").dump() << "\n"
      << chrome.call("Page.getFrameTree", json::object(), page).dump() << "\n"
      << diagnosis();
  chrome.evaluate(page, "new Promise(r => setTimeout(() => r(true), 500))");  // one more paint for the screenshot

  const json shot = chrome.call("Page.captureScreenshot", {{"format", "png"}}, page);
  ASSERT_TRUE(shot.contains("data")) << shot.dump().substr(0, 200) << "\n" << diagnosis();
  const std::string png = from_base64(shot["data"].get<std::string>());
  EXPECT_EQ(png.substr(1, 3), "PNG");
  EXPECT_GT(png.size(), 10'000u);
  std::ofstream(dir / "serve-page.png", std::ios::binary) << png;

  for (const json& e : chrome.events()) {
    const std::string method = e.value("method", "");
    EXPECT_NE(method, "Runtime.exceptionThrown") << e.dump();
    EXPECT_NE(method, "Inspector.targetCrashed") << diagnosis();
    if (method == "Runtime.consoleAPICalled") { EXPECT_NE(e["params"].value("type", ""), "error") << e.dump(); }
  }
  // The browser's profile goes once the browser has gone (removing it beside a live browser raced with the browser's
  // own writes: "Directory not empty"); the screenshot and the server's files stay for a look.
  chrome.quit();
  std::error_code ignored;
  fs::remove_all(dir / "profile", ignored);
}

}  // namespace
