#include "cli/command_names.hpp"

#include <algorithm>

#include "trainsim/errors.hpp"

namespace trainsim::cli {

std::string unknown_command(int argc, const char* const* argv, const std::vector<Command>& commands) {
  // trainsim's own options (--help, --version) take no value, so the first word that is not an
  // option is where the command must be.
  const auto first = std::find_if(argv + 1, argv + argc, [](const char* a) { return a[0] != '-'; });
  if (first == argv + argc) return "";
  const std::string word = *first;
  std::vector<std::string> names;
  for (const Command& c : commands) names.push_back(c.app->get_name());
  if (std::find(names.begin(), names.end(), word) != names.end()) return "";
  std::string message = "unknown command '" + word + "'";
  if (const std::string guess = closest_match(word, names); !guess.empty()) message += " (did you mean " + guess + "?)";
  return message + "; commands: " + join(names);
}

}  // namespace trainsim::cli
