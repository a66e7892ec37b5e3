#pragma once
// Errors carry their context so the user sees what to fix: the file, the key path inside it and
// what was expected. Nothing is swallowed: the CLI prints the message and exits non-zero.
#include <stdexcept>
#include <string>

namespace trainsim {

// Any error trainsim reports to the user.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
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

// The simulated workload cannot make progress (e.g. mismatched collective order across ranks).
class DeadlockError : public Error {
 public:
  using Error::Error;
};

}  // namespace trainsim
