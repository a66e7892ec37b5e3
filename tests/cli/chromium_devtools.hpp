#pragma once
// Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages ending in
// a NUL byte, written to the browser's fd 3 and read from its fd 4), for tests that use a live page as a person
// would: fill in a form, click, wait for what the page shows. No websocket and no library: the protocol's few
// calls a test needs. The browser runs in a process group of its own, killed with the object.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/chromium.hpp"

namespace trainsim_cli_test {

class ChromiumDevTools {
 public:
  using Json = nlohmann::json;

  // Starts `browser` headless with its profile in `dir`.
  ChromiumDevTools(const std::string& browser, const std::filesystem::path& dir) {
    // The command line and the log's path are made before fork(): the child only duplicates descriptors and execs.
    std::vector<std::string> args{browser};
    std::istringstream switches(trainsim::test::kHeadlessSwitches);
    for (std::string s; switches >> s;) args.push_back(s);
    for (const char* s : {"--remote-debugging-pipe", "--window-size=1280,1600"}) args.emplace_back(s);
    args.push_back("--user-data-dir=" + (dir / "profile").string());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string log = (dir / "chromium.log").string();
    int to_browser[2], from_browser[2];
    if (pipe(to_browser) != 0 || pipe(from_browser) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      // The browser reads commands on fd 3 and writes answers on fd 4.
      dup2(to_browser[0], 3);
      dup2(from_browser[1], 4);
      for (int fd : {to_browser[0], to_browser[1], from_browser[0], from_browser[1]})
        if (fd > 4) close(fd);
      if (FILE* f = freopen(log.c_str(), "w", stderr)) (void)f;
      execv(browser.c_str(), argv.data());
      _exit(127);
    }
    if (pid_ > 0) setpgid(pid_, pid_);
    close(to_browser[0]);
    close(from_browser[1]);
    write_fd_ = to_browser[1];
    read_fd_ = from_browser[0];
  }
  ~ChromiumDevTools() { quit(); }
  // Ends the browser (its whole process group) and waits for it: after this nothing writes to its profile. Safe to
  // call again.
  void quit() {
    if (write_fd_ >= 0) ::close(write_fd_);
    if (read_fd_ >= 0) ::close(read_fd_);
    write_fd_ = read_fd_ = -1;
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  ChromiumDevTools(const ChromiumDevTools&) = delete;
  ChromiumDevTools& operator=(const ChromiumDevTools&) = delete;

  bool started() const { return pid_ > 0 && write_fd_ >= 0; }

  // Sends `method` (to the page of `session`, or the browser) and waits for its answer: its "result", or a JSON
  // object {"error": ...} when the browser refused it or did not answer in `seconds`.
  Json call(const std::string& method, const Json& params = Json::object(), const std::string& session = "",
            double seconds = 30) {
    Json message{{"id", ++last_id_}, {"method", method}, {"params", params}};
    if (!session.empty()) message["sessionId"] = session;
    const std::string text = message.dump() + std::string(1, '\0');
    for (std::size_t sent = 0; sent < text.size();) {
      const ssize_t n = write(write_fd_, text.data() + sent, text.size() - sent);
      if (n <= 0) return Json{{"error", "the browser's pipe is closed"}};
      sent += static_cast<std::size_t>(n);
    }
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                            std::chrono::duration<double>(seconds));
    while (std::chrono::steady_clock::now() < end) {
      Json m;
      if (!next_message(m, end)) break;
      if (m.contains("id") && m["id"] == last_id_)
        return m.contains("error") ? Json{{"error", m["error"]}} : m["result"];
      if (m.contains("method")) events_.push_back(m);
    }
    return Json{{"error", "no answer to " + method}};
  }

  // Runs `expression` in the page (awaiting a promise) and returns its value (null when it threw).
  Json evaluate(const std::string& session, const std::string& expression) {
    const Json r = call("Runtime.evaluate",
                        {{"expression", expression}, {"awaitPromise", true}, {"returnByValue", true}}, session);
    if (!r.contains("result") || r.contains("exceptionDetails")) return nullptr;
    return r["result"].value("value", Json());
  }

  // Every event received so far (console messages, exceptions, ...).
  const std::vector<Json>& events() const { return events_; }

 private:
  // The next complete message, or false at `end` or when the pipe closed.
  bool next_message(Json& out, std::chrono::steady_clock::time_point end) {
    for (;;) {
      if (const auto nul = buffer_.find('\0'); nul != std::string::npos) {
        out = Json::parse(buffer_.substr(0, nul), nullptr, false);
        buffer_.erase(0, nul + 1);
        return !out.is_discarded();
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{read_fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      char chunk[65536];
      const ssize_t n = read(read_fd_, chunk, sizeof chunk);
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  pid_t pid_ = -1;
  int write_fd_ = -1, read_fd_ = -1;
  int last_id_ = 0;
  std::string buffer_;
  std::vector<Json> events_;
};

}  // namespace trainsim_cli_test
