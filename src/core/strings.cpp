#include "core/strings.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

namespace trainsim {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// How people spell one name several ways: case, separators ("H100-SXM", "h100_sxm", "H100 SXM").
std::string normalise(std::string_view name) {
  std::string out;
  for (char c : name)
    if (c != '-' && c != '_' && c != ' ') out += lower(c);
  return out;
}

// Characters that are typed for one another when a name is copied from a datasheet or a slide.
char look_alike_class(char c) {
  switch (c) {
    case 'o': return '0';
    case 'l':
    case 'i': return '1';
    default: return c;
  }
}

// Levenshtein DP over two normalised names, look-alikes substituting for free. Returns the last
// row: row[j] is the distance from `a` to the first j characters of `b`.
std::vector<std::size_t> distance_row(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = look_alike_class(a[i - 1]) == look_alike_class(b[j - 1]);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev;
}

struct Score {
  std::size_t distance = std::numeric_limits<std::size_t>::max();  // what decides, and is bounded
  std::size_t whole = std::numeric_limits<std::size_t>::max();     // ties: the closer whole name
  bool operator<(const Score& o) const { return distance != o.distance ? distance < o.distance : whole < o.whole; }
};

// Shorter words than this are too ambiguous to be read as the start of a name ("h" would match
// every H-something).
constexpr std::size_t kMinPrefixWord = 3;

Score score(const std::string& word, const std::string& candidate) {
  const std::vector<std::size_t> row = distance_row(word, candidate);
  Score s;
  s.whole = row.back();
  s.distance = s.whole;
  // A word that is the start of a name ("H100" for H100-SXM) is what users abbreviate to; taken
  // when that start is spelt nearly right (a typo per three characters), so that a short word is
  // not "the start" of every long name.
  if (word.size() >= kMinPrefixWord) {
    const std::size_t start = *std::min_element(row.begin(), row.end());
    if (start <= word.size() / 3) s.distance = std::min(s.distance, start);
  }
  // A candidate that contains the word, or is contained in it, is a good guess even if far in edits.
  if (!word.empty() && (candidate.find(word) != std::string::npos || word.find(candidate) != std::string::npos))
    s.distance = std::min<std::size_t>(s.distance, 2);
  return s;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = lower(a[i - 1]) == lower(b[j - 1]);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string w = normalise(word);
  std::string best;
  Score best_score;
  for (const auto& c : candidates) {
    const Score s = score(w, normalise(c));
    if (s < best_score) {
      best_score = s;
      best = c;
    }
  }
  const std::size_t limit = std::max<std::size_t>(3, w.size() / 2);
  return best_score.distance <= limit ? best : std::string{};
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = lower(c);
  return out;
}

std::string trim(std::string_view text) {
  std::size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  return std::string(text.substr(b, e - b));
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

}  // namespace trainsim
