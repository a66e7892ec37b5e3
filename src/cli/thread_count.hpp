#pragma once
// `--threads` of validate, sweep and tune: 0 (all cores) or a count up to kMaxThreads, one rule and
// one message for every command.
#include <string>

#include <CLI/CLI.hpp>

namespace trainsim::cli {

// More than any machine trainsim runs on has cores; a larger count is a typo, not a request.
inline constexpr int kMaxThreads = 1024;

// The count `text` gives; throws Error naming `flag` for anything else.
int parse_thread_count(const std::string& flag, const std::string& text);

// The same check for an option CLI11 reads as a number.
CLI::Validator thread_count_check();

}  // namespace trainsim::cli
