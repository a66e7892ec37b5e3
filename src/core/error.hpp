#pragma once
// Errors carry their context so the user sees what to fix: the file, the key path inside it and
// what was expected. Nothing is swallowed: the CLI prints the message and exits non-zero.
//
// Two families, so that a user can tell their own mistake from a bug in trainsim:
//  - trainsim::Error and its subclasses: something in the input (scenario, --set, flag, data file)
//    is wrong or cannot be simulated. The CLI prints "error: ..." and exits 1.
//  - trainsim::InternalError (thrown by TRAINSIM_CHECK, core/check.hpp): an invariant of the code
//    itself broke, whatever the input. It is not an Error, so no `catch (const Error&)` can turn it
//    into a user's mistake; the CLI prints "internal error: ... please report" and exits 2.
#include <stdexcept>
#include <string>

namespace trainsim {

// Any error trainsim reports to the user.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A line of a user's file (a workload table, a topology file), for the errors that say "FILE:LINE: what".
struct FileLine {
  const std::string& path;
  int line;
  [[noreturn]] void fail(const std::string& what) const;
};

// Invalid input: names the file and the key path (e.g. "parallelism.tensor").
class ScenarioError : public Error {
 public:
  ScenarioError(std::string file, std::string key, std::string message);
  const std::string& file() const { return file_; }
  const std::string& key() const { return key_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string file_, key_, detail_;
};

// The job does not fit in GPU memory (run without --allow-oom). A sweep or tune reports such a
// point as "out of memory" rather than as invalid input.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

// A broken invariant: a state no input can produce (ns-3's NS_ASSERT_MSG, SimGrid's xbt_assert).
// what() is the failed condition and the message; where() the source file and line that checked it.
class InternalError : public std::logic_error {
 public:
  InternalError(const std::string& message, std::string file, int line);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  std::string where() const { return file_ + ":" + std::to_string(line_); }

 private:
  std::string file_;
  int line_ = 0;
};

// The line the CLI prints for an internal error (without a trailing newline): "internal error: <what>
// (at FILE:LINE) — this is a bug in trainsim, please report it with the scenario".
std::string internal_error_message(const InternalError& e);

// The simulated workload cannot make progress (e.g. mismatched collective order across ranks).
class DeadlockError : public Error {
 public:
  using Error::Error;
};

}  // namespace trainsim
