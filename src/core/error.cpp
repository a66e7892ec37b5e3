#include "core/error.hpp"

namespace trainsim {

namespace {
std::string compose(const std::string& file, const std::string& key, const std::string& message) {
  std::string out;
  if (!file.empty()) out += file + ": ";
  if (!key.empty()) out += key + ": ";
  return out + message;
}
}  // namespace

ScenarioError::ScenarioError(std::string file, std::string key, std::string message)
    : Error(compose(file, key, message)), file_(std::move(file)), key_(std::move(key)), detail_(std::move(message)) {}

}  // namespace trainsim
