#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace trainsim {

// Levenshtein distance, for "did you mean ...?" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or "" when none is reasonably close.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// "a, b, c"
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

}  // namespace trainsim
