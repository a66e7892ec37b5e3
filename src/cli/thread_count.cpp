#include "cli/thread_count.hpp"

#include <charconv>

#include <fmt/format.h>

#include "trainsim/errors.hpp"

namespace trainsim::cli {

namespace {

std::string expected(const std::string& text) {
  return fmt::format("expected 0 (all cores) or a number of threads from 1 to {}, got '{}'", kMaxThreads, text);
}

bool valid(const std::string& text, int& count) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, count);
  return !text.empty() && ec == std::errc() && ptr == end && count >= 0 && count <= kMaxThreads;
}

}  // namespace

int parse_thread_count(const std::string& flag, const std::string& text) {
  int count = 0;
  if (!valid(text, count)) throw Error(flag + ": " + expected(text));
  return count;
}

CLI::Validator thread_count_check() {
  return CLI::Validator(
      [](std::string& text) {
        int count = 0;
        return valid(text, count) ? std::string() : expected(text);
      },
      fmt::format("0..{}", kMaxThreads));
}

}  // namespace trainsim::cli
