#include "report/format_utils.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace trainsim::report_format {

namespace {
std::string group_digit_string(const std::string& digits) {
  std::string out;
  // Insert a comma before every group of three digits counted from the right.
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}
}  // namespace

std::string group_digits(std::int64_t value) {
  // Format the magnitude as unsigned so that INT64_MIN does not overflow.
  const std::uint64_t magnitude = value < 0 ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
  std::string out = group_digit_string(fmt::format("{}", magnitude));
  if (value < 0) out.insert(out.begin(), '-');
  return out;
}

std::string group_digits(double value) {
  if (!std::isfinite(value)) return fmt::format("{}", value);
  std::string out = group_digit_string(fmt::format("{:.0f}", std::fabs(value)));
  // "-0" is not worth printing: only negative values that survive rounding get a sign.
  if (value < 0 && out != "0") out.insert(out.begin(), '-');
  return out;
}

std::string human_bytes(double bytes) {
  if (!std::isfinite(bytes)) return fmt::format("{} B", bytes);
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  constexpr int kLast = static_cast<int>(sizeof(kUnits) / sizeof(kUnits[0])) - 1;
  double scaled = bytes;
  int unit = 0;
  while (std::fabs(scaled) >= 1024.0 && unit < kLast) {
    scaled /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{:.0f} B", scaled);
  return fmt::format("{:.2f} {}", scaled, kUnits[unit]);
}

std::string human_duration(double seconds) {
  if (!std::isfinite(seconds)) return fmt::format("{} s", seconds);
  const double a = std::fabs(seconds);
  auto three = [](double v, const char* unit) {
    return v >= 100  ? fmt::format("{:.0f} {}", v, unit)
           : v >= 10 ? fmt::format("{:.1f} {}", v, unit)
                     : fmt::format("{:.2f} {}", v, unit);
  };
  if (a == 0) return "0 s";
  if (a < 1e-6) return three(seconds * 1e9, "ns");
  if (a < 1e-3) return three(seconds * 1e6, "us");
  if (a < 1) return three(seconds * 1e3, "ms");
  return three(seconds, "s");
}

std::string or_dash(const std::string& text) { return text.empty() ? "-" : text; }

std::string percent(double fraction) { return fmt::format("{:.1f} %", fraction * 100.0); }

std::string share_of(double part, double whole) {
  if (!(whole > 0.0)) return "-";
  return fmt::format("{:.1f}", part / whole * 100.0);
}

std::string compact_number(double value) {
  const double magnitude = std::fabs(value);
  if (!std::isfinite(value)) return fmt::format("{}", value);
  if (magnitude >= 1e4) return fmt::format("{:.0f}", value);
  if (magnitude >= 100) return fmt::format("{:.1f}", value);
  if (magnitude >= 1) return fmt::format("{:.3f}", value);
  return fmt::format("{:.4f}", value);
}

std::string abs_percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100.0); }

std::string signed_percent(double relative_error) {
  if (!std::isfinite(relative_error)) return "n/a";
  return fmt::format("{:+.1f}%", relative_error * 100.0);
}

std::string json_quote(std::string_view text) {
  // nlohmann does the escaping (control characters, quotes, backslashes); invalid UTF-8 is
  // replaced rather than thrown so that a stray byte in a name cannot abort a trace halfway.
  return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';  // RFC 4180: a quote inside a quoted field is doubled
    out += c;
  }
  out += '"';
  return out;
}

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace trainsim::report_format
