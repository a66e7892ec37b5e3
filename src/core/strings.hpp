#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace trainsim {

// Levenshtein distance, case-insensitive, for "did you mean ...?" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or "" when none is reasonably close. Names are compared
// normalised (lowercase, without '-', '_' and spaces), with look-alike characters (0/o, 1/l/i)
// as equal, and a word may be the start of a longer name: "H1OO" and "h100" suggest H100-SXM,
// "llama3_70b" suggests llama3-70b.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// The fields of a line separated by spaces and tabs (runs of them count as one), as views into `line`.
std::vector<std::string_view> split_fields(std::string_view line);

// `text` in lower case (ASCII).
std::string to_lower(std::string_view text);

// `text` without leading and trailing whitespace (space, tab, CR, LF, FF, VT).
std::string trim(std::string_view text);

// "a, b, c"
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

}  // namespace trainsim
