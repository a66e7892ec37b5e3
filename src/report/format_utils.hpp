#pragma once
// Small, deterministic number/string formatting shared by the report writers. Everything goes
// through fmt with explicit precision so that output never depends on the locale or iostream state.
#include <cstdint>
#include <string>
#include <string_view>

namespace trainsim::report_format {

// 1234567.8 -> "1,234,568" (rounded to an integer, comma-grouped; non-finite -> "nan"/"inf").
std::string group_digits(double value);
std::string group_digits(std::int64_t value);  // exact, for counters beyond 2^53

// Binary units as the comm table wants them: "512 B", "1.50 KiB", "3.00 MiB", "1.25 GiB", "2.00 TiB".
std::string human_bytes(double bytes);

// Seconds in the unit that keeps 3 significant digits: "812 ns", "15.2 us", "3.40 ms", "1.25 s".
std::string human_duration(double seconds);

// An em dash: what the report prints for a number nothing in the input determines (no model: no FLOPs).
inline constexpr const char* kUnknown = "\u2014";

// The text itself, or "-" when it is empty (a name the scenario did not give).
std::string or_dash(const std::string& text);

// A 0..1 fraction as "45.5 %" (one decimal).
std::string percent(double fraction);

// `part` as a percentage of `whole` with one decimal, or "-" when `whole` is not positive.
std::string share_of(double part, double whole);

// A number of any magnitude in a short, fixed-precision form for tables:
// >= 1e4 -> no decimals, >= 100 -> 1, >= 1 -> 3, below -> 4 significant-looking decimals.
std::string compact_number(double value);

// An absolute error fraction as a percentage with one decimal: 0.123 -> "12.3%".
std::string abs_percent(double fraction);

// A signed relative error as "+4.7%" / "-12.0%"; "n/a" when not finite.
std::string signed_percent(double relative_error);

// JSON string literal (quotes and escapes included), for writers that stream JSON by hand.
std::string json_quote(std::string_view text);

// RFC 4180 CSV field: quoted only when it contains a comma, quote, CR or LF.
std::string csv_field(std::string_view text);

// Markdown table cell: '|' escaped, line breaks folded into spaces.
std::string markdown_cell(std::string_view text);

}  // namespace trainsim::report_format
