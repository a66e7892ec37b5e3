// The page `trainsim serve` answers at `/` (service/web_page.hpp). Read as text: a complete document that loads
// nothing from elsewhere, carries the element ids browser tests drive, calls the API's paths, and never hands a
// string to innerHTML. Rendered in headless Chromium (skipped without chromium): opened as a file it says there is
// no server instead of failing; with a stand-in for fetch() that answers as the API does, it draws the job list,
// sends a submission with the token, the pickers' edits, the overrides and the command's options and shows the 400's
// message and key, compares two runs, shows a sweep's points, a run's report and a failure, and puts a failed job's
// scenario back into the form; markup in labels, errors and results shows as text, and no script error occurs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include <unistd.h>

#include "service/web_page.hpp"
#include "support/chromium.hpp"
#include "support/shell.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using trainsim::service::web_page;

std::size_t count(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(WebPage, IsOneCompleteDocument) {
  const std::string_view page = web_page();
  EXPECT_TRUE(page.starts_with("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">"));
  EXPECT_TRUE(page.ends_with("</body>\n</html>\n"));
  for (const char* tag :
       {"<html", "</html>", "<head>", "</head>", "<body>", "</body>", "<style>", "</style>", "<title>"})
    EXPECT_EQ(count(page, tag), 1u) << tag;
  // One inline script (the browser tests below put their stand-ins before it).
  EXPECT_EQ(count(page, "<script>"), 1u);
  EXPECT_EQ(count(page, "</script>"), 1u);
  EXPECT_EQ(page.data(), web_page().data());  // built once
}

TEST(WebPage, LoadsNothingFromElsewhere) {
  const std::string_view page = web_page();
  EXPECT_EQ(count(page, "http://"), 0u);
  EXPECT_EQ(count(page, "https://"), 0u);
  EXPECT_EQ(count(page, "<script src"), 0u);
  EXPECT_EQ(count(page, "<link"), 0u);
  EXPECT_EQ(count(page, "@import"), 0u);
  EXPECT_EQ(count(page, "url("), 0u);   // no web fonts or images from CSS
  EXPECT_EQ(count(page, "=\"//"), 0u);  // no protocol-relative src or href
}

TEST(WebPage, HasTheIdsBrowserTestsDrive) {
  const std::string_view page = web_page();
  for (const char* id :
       {"scenario",       "command", "overrides", "submit",   "jobs",      "message",     "result",       "job-state",
        "compare-table",  "token",   "label",     "file",     "preset",    "gpu",         "filter-state", "filter-q",
        "compare-button", "prev",    "next",      "job-view", "home-view", "compare-view"})
    EXPECT_EQ(count(page, std::string("id=\"") + id + "\""), 1u) << id;  // present, and once
  EXPECT_THAT(std::string(page), HasSubstr("<tbody id=\"jobs\"></tbody>"));
  EXPECT_THAT(std::string(page), HasSubstr("<textarea id=\"scenario\""));
  EXPECT_THAT(std::string(page), HasSubstr("<select id=\"command\""));
  EXPECT_THAT(std::string(page), HasSubstr("<button id=\"submit\" type=\"submit\""));
  for (const char* command : {"run", "memory", "nccl-test", "sweep", "tune", "plan"}) {
    EXPECT_THAT(std::string(page), HasSubstr(std::string("<option value=\"") + command + "\">")) << command;
    EXPECT_THAT(std::string(page), HasSubstr(std::string("<fieldset data-command=\"") + command + "\"")) << command;
  }
}

// Strings from the API reach the DOM only as text: there is no HTML parser call in the script at all.
TEST(WebPage, PutsStringsInTheDomAsTextOnly) {
  const std::string_view page = web_page();
  for (const char* sink : {"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
                           "createContextualFragment", "DOMParser"})
    EXPECT_EQ(count(page, sink), 0u) << sink;
  EXPECT_GE(count(page, ".textContent = "), 5u);
  EXPECT_GE(count(page, "document.createTextNode("), 1u);
  // The report's frame runs its script in an origin of its own, away from the token.
  EXPECT_THAT(std::string(page), HasSubstr("sandbox: \"allow-scripts allow-popups\""));
  EXPECT_EQ(count(page, "allow-same-origin"), 0u);
}

TEST(WebPage, CallsTheApi) {
  const std::string page(web_page());
  for (const char* call :
       {"api(\"POST\", \"/api/jobs\", body)", "\"/api/jobs\" + query", "\"/api/jobs/\" + enc(id)",
        "api(\"DELETE\", \"/api/jobs/\" + enc(id))", "\"/result\"", "\"/html\"", "api(\"GET\", \"/api/presets\")",
        "\"/api/compare?a=\" + enc(a) + \"&b=\" + enc(b)", "api(\"GET\", \"/api/health\")",
        "headers.Authorization = \"Bearer \" + token", "localStorage"})
    EXPECT_THAT(page, HasSubstr(call)) << call;
  // The list's query, as the API takes it.
  EXPECT_THAT(page, HasSubstr("\"?state=\" + enc(list.state) + \"&q=\" + enc(list.q) + \"&limit=\" + list.limit + "
                              "\"&offset=\" + list.offset"));
}

// ---- headless Chromium ----

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

using trainsim::test::chromium;
using trainsim::test::kNoChromium;
using trainsim::test::run_shell;
using trainsim::test::ShellResult;

struct Rendered {
  fs::path dir;
  int status = -1;
  std::string dom;       // after the scripts ran and their timers had 4 s of virtual time
  std::string dom_path;  // where it is kept, for a look after a failure
  std::string console;   // the browser log's console messages and uncaught exceptions about the page
};

// A failure names the missing (or unwanted) text and the file of the DOM, rather than printing the whole DOM.
::testing::AssertionResult has(const Rendered& r, std::string_view text) {
  if (r.dom.find(text) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the DOM lacks: " << text << "\n  (DOM: " << r.dom_path << ")";
}
::testing::AssertionResult lacks(const Rendered& r, std::string_view text) {
  if (r.dom.find(text) == std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the DOM has: " << text << "\n  (DOM: " << r.dom_path << ")";
}

// Opens `html` written to a file in headless Chromium at `hash`. Virtual time runs the page's timers (its polling)
// without waiting for them, and ends the run after 4 s of it.
Rendered render(const std::string& html, const std::string& name, const std::string& hash) {
  // The process id in the name: two builds' tests may run at once.
  const fs::path dir = fs::temp_directory_path() / ("trainsim_web_page_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path page = dir / (name + ".html");
  std::ofstream(page, std::ios::binary) << html;
  const ShellResult b =
      run_shell("{ timeout 60 " + chromium() + " " + trainsim::test::kHeadlessSwitches +
                " --user-data-dir=" + (dir / "profile").string() +
                " --enable-logging=stderr --v=0 --virtual-time-budget=4000 --dump-dom 'file://" + page.string() + hash +
                "' > " + (dir / "dom.html").string() + " 2> " + (dir / "chromium.log").string() + "; }");
  Rendered r;
  r.dir = dir;
  r.status = b.status;
  r.dom_path = (dir / "dom.html").string();
  r.dom = read_text(r.dom_path);
  r.console = trainsim::test::console_messages(b.out + read_text(dir / "chromium.log"), page.filename().string());
  return r;
}

// The files of a passing test go; a failing test's stay for a look.
void tidy(const Rendered& r) {
  std::error_code ec;
  if (!::testing::Test::HasFailure()) fs::remove_all(r.dir, ec);
}

// The page with `before` inserted before its script and `after` after it.
std::string with_scripts(const std::string& before, const std::string& after) {
  std::string html(web_page());
  const std::size_t end = html.find("</body>");
  html.insert(end, after);
  html.insert(html.find("<script>"), before);
  return html;
}

// Opened as a file there is no server: fetch() fails, and the page says so instead of throwing. Chromium logs each
// refused fetch itself (a CORS line); the page logs nothing and throws nothing.
TEST(WebPageBrowser, OpenedAsAFileSaysThereIsNoServer) {
  if (chromium().empty()) GTEST_SKIP() << kNoChromium;
  const Rendered r = render(std::string(web_page()), "file", "");
  ASSERT_EQ(r.status, 0) << r.console;
  std::istringstream lines(r.console);
  for (std::string line; std::getline(lines, line);) EXPECT_THAT(line, HasSubstr("CORS policy")) << line;
  EXPECT_TRUE(has(r, "<body data-js=\"ready\">"));
  EXPECT_TRUE(has(r, "<form id=\"submit-form\""));
  EXPECT_TRUE(has(r, "<textarea id=\"scenario\""));
  EXPECT_TRUE(has(r, "<div id=\"message\" class=\"msg error\""));
  EXPECT_TRUE(has(r, ": This page was opened as a file, so it has no server to ask (Failed to fetch)."));
  EXPECT_TRUE(has(r, "<tbody id=\"jobs\"><tr class=\"empty\"><td colspan=\"9\">"));
  EXPECT_TRUE(lacks(r, "<span id=\"message-text\">Page error"));
  tidy(r);
}

// A stand-in for fetch(): the API's answers for five jobs, each call logged (method, path, Authorization, body) into
// <pre id="stub-log"> so the dumped DOM shows what the page sent. TOKEN is replaced by the token the page finds in
// localStorage ("" for none). Labels, errors and results carry markup, which must show as text.
constexpr const char* kStub = R"JS(<script>
(function () {
  "use strict";
  try {
    if ("TOKEN") localStorage.setItem("trainsim.token", "TOKEN");
    else localStorage.removeItem("trainsim.token");
  } catch (e) {}
  var log = [];
  function note(line) {
    log.push(line);
    var pre = document.getElementById("stub-log");
    if (!pre) { pre = document.createElement("pre"); pre.id = "stub-log"; document.body.appendChild(pre); }
    pre.textContent = log.join("\n");
  }
  function job(id, command, label, state, extra) {
    var j = { id: id, command: command, label: label, state: state, progress: state === "done" ? 1 : 0,
              created_ms: 1700000000000, started_ms: state === "queued" ? 0 : 1700000001000,
              finished_ms: state === "done" || state === "failed" ? 1700000003500 : 0, attempts: 1, error: null,
              key: null };
    Object.keys(extra || {}).forEach(function (k) { j[k] = extra[k]; });
    return j;
  }
  var R1 = "1111111111111111", R2 = "2222222222222222", R3 = "3333333333333333", M4 = "4444444444444444",
      S5 = "5555555555555555";
  var jobs = [job(R1, "run", "big.yaml", "running", { progress: 0.25, finished_ms: 0 }),
              job(R2, "run", "\u003cimg src=x onerror=alert(1)>.yaml", "done"),
              job(R3, "run", "b.yaml", "done"),
              job(M4, "memory", "m.yaml", "failed",
                  { error: "m.yaml: model.preset: unknown preset '<gpt5>'", key: "model.preset" }),
              job(S5, "sweep", "s.yaml", "done")];
  var sweepPolls = 0;
  function links(j) {
    var base = "/api/jobs/" + j.id, l = { self: base, scenario: base + "/scenario" };
    if (j.state === "done") { l.result = base + "/result"; if (j.command === "run") l.html = base + "/html"; }
    return l;
  }
  function answer(status, body, type) {
    return Promise.resolve(new Response(typeof body === "string" ? body : JSON.stringify(body),
                                        { status: status, headers: { "Content-Type": type || "application/json" } }));
  }
  var results = {};
  results[R2] = { scenario: "a", iteration_time_s: 1.25, tokens_per_s: 52428.8, mfu: 0.42, tflops_per_gpu: 415.25,
                  breakdown: { compute: 1, exposed_comm: 0.25 }, memory: { peak: 61.5, capacity: 80, fits: true } };
  results[S5] = { scenario: "s<x>", counts: { points: 2, ok: 2 },
                  points: [{ point: 0, values: { "cluster.nic_gbps": 100 }, status: "ok", reason: "",
                             result: { iteration_time_s: 2.5, mfu: 0.3, note: "\u003cb>slow\u003c/b>" } },
                           { point: 1, values: { "cluster.nic_gbps": 400 }, status: "ok", reason: "",
                             result: { iteration_time_s: 1.5, mfu: 0.5, note: "fast" } }] };
  window.fetch = function (url, init) {
    init = init || {};
    var method = init.method || "GET", headers = init.headers || {};
    note(method + " " + url + " " + (headers.Authorization || "-") + (init.body ? " " + init.body : ""));
    var path = String(url).split("?")[0], m;
    if (path === "/api/health")
      return answer(200, { status: "ok", version: "9.9<9>", queued: 0, running: 1, workers: 2 });
    if (path === "/api/presets")
      return answer(200, { models: [{ id: "llama3-8b", description: "Llama 3 8B" },
                                    { id: "gpt3-175b", description: "GPT-3 <175B>" }],
                           gpus: [{ id: "H100-SXM", memory_gib: 80 }, { id: "B200", memory_gib: 192 }],
                           example: "model:\n  preset: llama3-8b   # the model\ntraining: {global_batch_size: 8}\n" +
                                    "cluster:\n  num_gpus: 8\n  gpu: H100-SXM\n" });
    if (path === "/api/jobs" && method === "GET") return answer(200, { jobs: jobs, total: 120, limit: 50, offset: 0 });
    if (path === "/api/jobs" && method === "POST")
      return answer(400, { error: "job.yaml: parallelism.tensor: 4 does not divide <8> heads",
                           key: "parallelism.tensor" });
    if (path === "/api/compare")
      return answer(200, { a: { id: R2, label: jobs[1].label, command: "run" },
                           b: { id: R3, label: "b.yaml", command: "run" },
                           fields: [{ name: "iteration_time_s", a: 1.25, b: 1.5, change: 0.2 },
                                    { name: "tokens_per_s", a: 100, b: 120, change: 0.2 },
                                    { name: "critical_rank", a: 0, b: 3, change: null }],
                           breakdown: [{ name: "compute", a: 1, b: 0.9, change: -0.1 },
                                       { name: "exposed_comm_by_group.tp", a: 0.25, b: 0.25, change: 0 }] });
    if ((m = /^\/api\/jobs\/([0-9]{16})(\/(result|html|scenario))?$/.exec(path))) {
      var j = jobs.filter(function (x) { return x.id === m[1]; })[0];
      if (!j) return answer(404, { error: "no job " + m[1], key: null });
      if (method === "DELETE") return answer(200, { id: j.id, state: "cancelled" });
      if (!m[3]) {
        var out = JSON.parse(JSON.stringify(j));
        if (j.id === S5 && sweepPolls++ === 0) { out.state = "running"; out.progress = 0.5; out.finished_ms = 0; }
        out.links = links(out);
        return answer(200, out);
      }
      if (m[3] === "result") return answer(200, results[j.id]);
      if (m[3] === "html") return answer(200, "<!DOCTYPE html><h1>report of <run></h1>", "text/html");
      if (m[3] === "scenario") return answer(200, "model:\n  preset: llama3-8b\n", "application/yaml");
    }
    return answer(404, { error: "no such resource", key: null });
  };
})();
</script>
)JS";

std::string stub(const std::string& token) {
  std::string s = kStub;
  for (std::size_t at = s.find("TOKEN"); at != std::string::npos; at = s.find("TOKEN", at + token.size()))
    s.replace(at, 5, token);
  return s;
}

// A script that runs `steps` 300 ms after the page started, with two helpers: set(id, value) sets a control and
// fires its change event, click(id) clicks it.
std::string driver(const std::string& steps) {
  return R"(<script>
setTimeout(function () {
  function set(id, v) { var e = document.getElementById(id); e.value = v; e.dispatchEvent(new Event("change")); }
  function click(id) { document.getElementById(id).click(); }
)" + steps +
         "\n}, 300);\n</script>\n";
}

void expect_clean(const Rendered& r) {
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.console, "");  // nothing logged or thrown by the page
  EXPECT_TRUE(has(r, "<body data-js=\"ready\">"));
  EXPECT_TRUE(lacks(r, "<span id=\"message-text\">Page error"));
  EXPECT_TRUE(lacks(r, "<img"));
  EXPECT_TRUE(lacks(r, "<b>"));
}

TEST(WebPageBrowser, ListsJobsAndSubmitsWithTheTokenPickersAndOptions) {
  if (chromium().empty()) GTEST_SKIP() << kNoChromium;
  const Rendered r = render(with_scripts(stub("tok-123"), driver(R"(
  set("preset", "gpt3-175b");
  set("gpu", "B200");
  set("command", "sweep");
  document.getElementById("overrides").value = "parallelism.tensor=4\n# a comment\n--set cluster.nic_gbps=200\n";
  click("submit");)")),
                            "home", "");
  expect_clean(r);
  // Every call carries the token; the list asks for the first page of 50.
  EXPECT_TRUE(has(r, "GET /api/presets Bearer tok-123"));
  EXPECT_TRUE(has(r, "GET /api/jobs?state=&amp;q=&amp;limit=50&amp;offset=0 Bearer tok-123"));
  // Five rows: a running job with its progress and a cancel button, two done runs that can be picked, a failure
  // with its message as text, a label with markup as text.
  EXPECT_EQ(count(r.dom, "<tr class=\"state-"), 5u);
  EXPECT_TRUE(has(r, "<span class=\"badge running\">running</span>"));
  EXPECT_TRUE(has(r, "<progress max=\"1\" value=\"0.25\""));
  EXPECT_EQ(count(r.dom, "class=\"pick\""), 2u);
  EXPECT_EQ(count(r.dom, ">Cancel</button>"), 2u);  // the row's, and the job page's (hidden)
  EXPECT_TRUE(has(r, ">&lt;img src=x onerror=alert(1)&gt;.yaml</a>"));
  EXPECT_TRUE(has(r, "m.yaml: model.preset: unknown preset '&lt;gpt5&gt;'</div>"));
  EXPECT_TRUE(has(r, "<a href=\"#/job/3333333333333333\"><code>3333333333333333</code></a>"));
  EXPECT_TRUE(has(r, "<span id=\"page-info\" class=\"note\">1–5 of 120</span>"));
  EXPECT_TRUE(has(r, "<button type=\"button\" id=\"next\">Older</button>"));  // enabled: 115 more
  EXPECT_TRUE(has(r, "version 9.9&lt;9&gt; · 0 queued · 1 running · 2 workers"));
  // The submission: the pickers' edits of the example (a comment kept), overrides without comments or --set, the
  // sweep's options; the 400's message as text and its key.
  EXPECT_TRUE(has(r, R"(POST /api/jobs Bearer tok-123 {"command":"sweep","label":"scenario.yaml","scenario":)"
                     R"("model:\n  preset: gpt3-175b  # the model\ntraining: {global_batch_size: 8}\ncluster:\n)"
                     R"(  num_gpus: 8\n  gpu: B200\n","overrides":["parallelism.tensor=4","cluster.nic_gbps=200"],)"
                     R"("options":{"vary":["cluster.nic_gbps=100,200,400"],"zip":[],"allow_oom":false}})"));
  EXPECT_TRUE(has(r, "<div id=\"message\" class=\"msg error\""));
  EXPECT_TRUE(has(r,
                  "<span id=\"message-text\">The server refused the job: job.yaml: parallelism.tensor: 4 "
                  "does not divide &lt;8&gt; heads</span>"));
  EXPECT_TRUE(has(r, "<code id=\"message-key\">parallelism.tensor</code>"));
  // Only the sweep's options show.
  EXPECT_TRUE(has(r, "<fieldset data-command=\"sweep\">"));
  EXPECT_TRUE(has(r, "<fieldset data-command=\"run\" hidden=\"\">"));
  tidy(r);
}

TEST(WebPageBrowser, PicksTwoRunsAndComparesThem) {
  if (chromium().empty()) GTEST_SKIP() << kNoChromium;
  const Rendered r = render(with_scripts(stub(""), driver(R"(
  var boxes = document.querySelectorAll("#jobs input.pick");
  boxes[0].click();
  boxes[1].click();
  click("compare-button");)")),
                            "compare", "");
  expect_clean(r);
  EXPECT_TRUE(has(r, "GET /api/jobs?state=&amp;q=&amp;limit=50&amp;offset=0 -"));  // no token: no header
  EXPECT_TRUE(has(r, "GET /api/compare?a=2222222222222222&amp;b=3333333333333333 -"));
  EXPECT_TRUE(has(r, "<section id=\"compare-view\">"));
  EXPECT_TRUE(has(r,
                  "<a href=\"#/job/2222222222222222\">&lt;img src=x onerror=alert(1)&gt;.yaml "
                  "(2222222222222222)</a>"));
  // Times: more is worse; throughput: more is better; a rank is neither; no change is no colour.
  EXPECT_TRUE(has(r,
                  "<td class=\"l\">iteration_time_s</td><td title=\"1.25\">1.25</td><td title=\"1.5\">1.5"
                  "</td><td class=\"worse\">+20.0 %</td>"));
  EXPECT_TRUE(has(r,
                  "<td class=\"l\">tokens_per_s</td><td title=\"100\">100</td><td title=\"120\">120</td>"
                  "<td class=\"better\">+20.0 %</td>"));
  EXPECT_TRUE(has(r, "<td class=\"l\">critical_rank</td><td title=\"0\">0</td><td title=\"3\">3</td><td>–</td>"));
  EXPECT_TRUE(has(r,
                  "<td class=\"l\">compute</td><td title=\"1\">1</td><td title=\"0.9\">0.9</td>"
                  "<td class=\"better\">-10.0 %</td>"));
  EXPECT_TRUE(has(r,
                  "<td class=\"l\">exposed_comm_by_group.tp</td><td title=\"0.25\">0.25</td>"
                  "<td title=\"0.25\">0.25</td><td>0.0 %</td>"));
  EXPECT_TRUE(has(r, "<th colspan=\"4\">Breakdown of an iteration (s)</th>"));
  tidy(r);
}

// A sweep job first seen running, then done at the next poll: its points as a table, its JSON below.
TEST(WebPageBrowser, ShowsASweepsPointsOnceItIsDone) {
  if (chromium().empty()) GTEST_SKIP() << kNoChromium;
  const Rendered r = render(with_scripts(stub(""), ""), "sweep", "#/job/5555555555555555");
  expect_clean(r);
  EXPECT_EQ(count(r.dom, "GET /api/jobs/5555555555555555 -"), 2u);  // polled once more after "running", then stopped
  EXPECT_TRUE(has(r, "<span id=\"job-state\" class=\"badge done\">done</span>"));
  EXPECT_TRUE(has(r, "<h3>points (2)</h3>"));
  // Nested fields are headed by their own names; "reason", empty in every row, has no column.
  EXPECT_TRUE(has(r,
                  "<th scope=\"col\">point</th><th scope=\"col\" title=\"values.cluster.nic_gbps\">cluster.nic_gbps"
                  "</th><th scope=\"col\">status</th><th scope=\"col\" title=\"result.iteration_time_s\">"
                  "iteration_time_s</th><th scope=\"col\" title=\"result.mfu\">mfu</th><th scope=\"col\" "
                  "title=\"result.note\">note</th>"));
  EXPECT_TRUE(has(r,
                  "<td title=\"400\">400</td><td class=\"l\">ok</td><td title=\"1.5\">1.5</td>"
                  "<td title=\"0.5\">0.5</td><td class=\"l\">fast</td>"));
  EXPECT_TRUE(has(r, "<td class=\"l\">&lt;b&gt;slow&lt;/b&gt;</td>"));
  EXPECT_TRUE(has(r, "<th class=\"l\" scope=\"row\">scenario</th><td class=\"l wrap\">s&lt;x&gt;</td>"));
  EXPECT_TRUE(has(r,
                  "<details id=\"result-json\"><summary>JSON result</summary><pre>{\n  \"scenario\": "
                  "\"s&lt;x&gt;\","));
  EXPECT_TRUE(has(r,
                  "<a href=\"/api/jobs/5555555555555555/result\" target=\"_blank\" rel=\"noopener\" "
                  "id=\"raw-json-link\">raw JSON</a>"));
  tidy(r);
}

// A run with a token: the report is fetched with it and shown in a sandboxed frame; the headline numbers above.
TEST(WebPageBrowser, ShowsARunsReportInAFrame) {
  if (chromium().empty()) GTEST_SKIP() << kNoChromium;
  const Rendered r = render(with_scripts(stub("tok-9"), ""), "run", "#/job/2222222222222222");
  expect_clean(r);
  EXPECT_TRUE(has(r, "GET /api/jobs/2222222222222222/html Bearer tok-9"));
  EXPECT_TRUE(has(r,
                  "<iframe class=\"report\" id=\"report-frame\" title=\"HTML report of job "
                  "2222222222222222\" sandbox=\"allow-scripts allow-popups\" srcdoc=\""));
  EXPECT_TRUE(has(r, "report of "));
  EXPECT_TRUE(has(r, "<div class=\"label\">iteration</div><div class=\"value\">1.25 s</div>"));
  EXPECT_TRUE(has(r, "<div class=\"value\">42.0 %</div>"));
  EXPECT_TRUE(has(r, "<div class=\"value\">61.5 GiB</div><div class=\"sub\">of 80.0 GiB</div>"));
  EXPECT_TRUE(has(r, "id=\"raw-json-link\">raw JSON</a>"));
  EXPECT_TRUE(has(r, "<a href=\"blob:"));  // the JSON link holds the fetched JSON: a link cannot send a token
  EXPECT_TRUE(has(r, "<code id=\"share-link\">file://"));
  tidy(r);
}

// A failed job: its message and key; "Edit and resubmit" puts its scenario and command into the form, which submits
// them (the job view stays in the DOM, hidden).
TEST(WebPageBrowser, ShowsAFailureAndResubmitsItsScenario) {
  if (chromium().empty()) GTEST_SKIP() << kNoChromium;
  const Rendered r = render(with_scripts(stub(""), driver(R"(
  click("resubmit");
  setTimeout(function () { click("submit"); }, 300);)")),
                            "failed", "#/job/4444444444444444");
  expect_clean(r);
  EXPECT_EQ(count(r.dom, "GET /api/jobs/4444444444444444 -"), 1u);  // finished: no polling
  EXPECT_TRUE(has(r, "<span id=\"job-state\" class=\"badge failed\">failed</span>"));
  EXPECT_TRUE(has(r,
                  "<div class=\"failure\" id=\"job-error\"><h3>The job failed</h3><pre>m.yaml: "
                  "model.preset: unknown preset '&lt;gpt5&gt;'</pre><p>key: <code id=\"job-error-key\">"
                  "model.preset</code></p></div>"));
  EXPECT_TRUE(has(r, "<dt>took</dt><dd>2.5 s</dd>"));
  EXPECT_TRUE(has(r, "GET /api/jobs/4444444444444444/scenario -"));
  EXPECT_TRUE(has(r, "<section id=\"home-view\">"));
  EXPECT_TRUE(has(r,
                  R"(POST /api/jobs - {"command":"memory","label":"m.yaml","scenario":"model:\n  preset: llama3-8b\n",)"
                  R"("overrides":[],"options":{"allow_oom":false}})"));
  tidy(r);
}

}  // namespace
