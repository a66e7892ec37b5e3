#pragma once
// The first word of the command line, checked against the subcommands before CLI11 parses it:
// CLI11 would answer `trainsim frobnicate` with "A subcommand is required".
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace trainsim::cli {

// "unknown command 'frobnicate'; commands: run, validate, ..." (with a suggestion when one is
// close), or "" when the first word that is not an option is a command, or there is none.
std::string unknown_command(int argc, const char* const* argv, const std::vector<Command>& commands);

}  // namespace trainsim::cli
