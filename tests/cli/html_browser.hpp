#pragma once
// Headless Chromium for the HTML page tests (run, sweep and tune pages): the DOM after the page's script ran, the
// browser's log and a screenshot, from one launch. Tests skip when there is no chromium.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_support.hpp"
#include "support/chromium.hpp"

namespace trainsim_cli_test {

// The JSON a page embeds as <script type="application/json" id="trainsim-result"> ("" when there is none).
inline std::string embedded_result(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"trainsim-result\">";
  const auto start = html.find(open);
  if (start == std::string::npos) return "";
  const auto from = start + open.size();
  return html.substr(from, html.find("</script>", from) - from);
}

// A fresh directory of a test's.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("trainsim_html_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

using trainsim::test::chromium;
using trainsim::test::console_messages;
using trainsim::test::kNoChromium;

struct Rendered {
  int status = -1;
  std::string dom;     // the DOM after the page's scripts ran
  std::string log;     // the browser's stderr
  double seconds = 0;  // the launch, load, render and dump
};

// Opens `page` (file://) in headless Chromium with a profile in `dir`, dumps the DOM and writes a screenshot to
// `png`.
inline Rendered render_in_chromium(const std::string& browser, const std::filesystem::path& page,
                                   const std::filesystem::path& dir, const std::filesystem::path& png) {
  const std::filesystem::path dom_path = dir / "dom.html", log_path = dir / "chromium.log";
  const auto start = std::chrono::steady_clock::now();
  const Result b =
      run_shell("{ timeout 60 " + browser + " " + trainsim::test::kHeadlessSwitches +
                " --user-data-dir=" + (dir / "profile").string() +
                " --enable-logging=stderr --v=0 --window-size=1280,2000 --screenshot=" + png.string() +
                " --dump-dom file://" + page.string() + " > " + dom_path.string() + " 2> " + log_path.string() + "; }");
  Rendered r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.status = b.status;
  r.dom = read_file(dom_path);
  r.log = b.out + read_file(log_path);
  return r;
}

}  // namespace trainsim_cli_test
