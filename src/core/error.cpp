#include "core/error.hpp"

#include "core/check.hpp"

namespace trainsim {

namespace {
std::string compose(const std::string& file, const std::string& key, const std::string& message) {
  std::string out;
  if (!file.empty()) out += file + ": ";
  if (!key.empty()) out += key + ": ";
  return out + message;
}
}  // namespace

void FileLine::fail(const std::string& what) const { throw Error(path + ":" + std::to_string(line) + ": " + what); }

ScenarioError::ScenarioError(std::string file, std::string key, std::string message)
    : Error(compose(file, key, message)), file_(std::move(file)), key_(std::move(key)), detail_(std::move(message)) {}

namespace {
// __FILE__ is the compiler's path, absolute in most builds: keep it from the source tree's `src/` on,
// so a report reads the same whoever built the binary.
std::string source_relative(std::string file) {
  const std::size_t at = file.rfind("/src/");
  return at == std::string::npos ? file : file.substr(at + 1);
}
}  // namespace

InternalError::InternalError(const std::string& message, std::string file, int line)
    : std::logic_error(message), file_(source_relative(std::move(file))), line_(line) {}

std::string internal_error_message(const InternalError& e) {
  return std::string("internal error: ") + e.what() + " (at " + e.where() +
         ") — this is a bug in trainsim, please report it with the scenario";
}

}  // namespace trainsim

namespace trainsim::detail {

void check_failed(const char* condition, const std::string& message, const char* file, int line) {
  throw InternalError(message + " (check failed: " + condition + ")", file, line);
}

}  // namespace trainsim::detail
