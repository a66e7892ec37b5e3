#pragma once
// TRAINSIM_CHECK(condition, message): an invariant of the code, not a check of the user's input.
//
// When `condition` is false it throws trainsim::InternalError (core/error.hpp) with the condition's
// text, the message and the file:line of the check; the CLI prints it as "internal error: ... please
// report" and exits 2. Use it only for states that no scenario, flag or data file can produce (a
// workload op depending on a later op, an unknown enum value, a negative time out of internal
// arithmetic). Anything input can trigger stays a trainsim::Error naming the key, so that "error:"
// always means the user's input and exit status 2 always means a bug in trainsim.
//
// TRAINSIM_UNREACHABLE(message) is the same for a place control cannot reach (after a switch over
// every enumerator): it always throws, and the compiler knows it.
//
// `message` is any expression convertible to std::string (a literal, fmt::format(...)); it is
// evaluated only when the check fails, so formatting costs nothing on the normal path.
#include <string>

#include "core/error.hpp"

namespace trainsim::detail {
[[noreturn]] void check_failed(const char* condition, const std::string& message, const char* file, int line);
}  // namespace trainsim::detail

#define TRAINSIM_CHECK(condition, message)                                         \
  do {                                                                             \
    if (!(condition)) [[unlikely]]                                                 \
      ::trainsim::detail::check_failed(#condition, (message), __FILE__, __LINE__); \
  } while (false)

#define TRAINSIM_UNREACHABLE(message) ::trainsim::detail::check_failed("unreachable", (message), __FILE__, __LINE__)
