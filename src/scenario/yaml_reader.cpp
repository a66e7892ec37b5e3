#include "scenario/yaml_reader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <optional>
#include <system_error>
#include <utility>

#include "core/strings.hpp"

namespace trainsim::scenario_detail {

namespace {

// yaml-cpp gives quoted scalars the non-specific tag "!" and plain ones "?". A quoted "4" is a
// string in YAML, so it is not accepted where a number is expected.
bool is_quoted(const YAML::Node& node) { return node.Tag() == "!"; }

[[noreturn]] void wrong(const YAML::Node& node, const std::string& path, const std::string& file,
                        const std::string& expected) {
  std::string got = describe_node(node);
  if (node.IsScalar() && is_quoted(node)) got = "the string " + got;
  throw ScenarioError(file, path, "expected " + expected + ", got " + got);
}

void check_bound(double value, const YAML::Node& node, const std::string& path, const std::string& file, Bound bound,
                 const char* what) {
  const bool ok =
      bound == Bound::Any || (bound == Bound::NonNegative && value >= 0) || (bound == Bound::Positive && value > 0);
  if (!ok) wrong(node, path, file, describe_expected(what, bound));
}

}  // namespace

std::string describe_expected(const char* what, Bound bound) {
  switch (bound) {
    case Bound::Positive: return std::string("a positive ") + what;
    case Bound::NonNegative: return std::string("a non-negative ") + what;
    case Bound::Any: break;
  }
  const std::string w = what;
  return (w.empty() || std::string("aeiou").find(w[0]) == std::string::npos ? "a " : "an ") + w;
}

std::string describe_node(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "null";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  std::string text = node.Scalar();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return "'" + text + "'";
}

bool is_missing(const YAML::Node& node) { return !node.IsDefined() || node.IsNull(); }

std::int64_t parse_integer(const YAML::Node& node, const std::string& path, const std::string& file, Bound bound) {
  const char* what = "integer";
  if (!node.IsScalar() || is_quoted(node)) wrong(node, path, file, describe_expected(what, bound));
  std::string_view text = node.Scalar();
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) {
    if (ec == std::errc::result_out_of_range)
      wrong(node, path, file, describe_expected("integer that fits in 64 bits", bound));
    wrong(node, path, file, describe_expected(what, bound));
  }
  check_bound(static_cast<double>(value), node, path, file, bound, what);
  return value;
}

int parse_int(const YAML::Node& node, const std::string& path, const std::string& file, Bound bound) {
  const std::int64_t value = parse_integer(node, path, file, bound);
  if (value > INT_MAX || value < INT_MIN) wrong(node, path, file, describe_expected("integer below 2^31", bound));
  return static_cast<int>(value);
}

double parse_number(const YAML::Node& node, const std::string& path, const std::string& file, Bound bound) {
  const char* what = "number";
  if (!node.IsScalar() || is_quoted(node)) wrong(node, path, file, describe_expected(what, bound));
  std::string_view text = node.Scalar();
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // YAML's .inf/.nan never reach here as numbers (from_chars does not read them); "inf"/"nan" do, so
  // finiteness is checked explicitly.
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value))
    wrong(node, path, file, describe_expected(what, bound));
  check_bound(value, node, path, file, bound, what);
  return value;
}

namespace {

// The plain scalars yaml-cpp reads as booleans (true/false and YAML 1.1's y/n, yes/no, on/off), each all lower
// case, all upper case or capitalised. Read here rather than with YAML::convert<bool>, whose table of names is a
// function-local static inside the (uninstrumented) library: scenarios are read on several threads at once
// (validate, sweep, tune) and ThreadSanitizer cannot see that static's initialisation as synchronised.
std::optional<bool> yaml_boolean(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const bool rest_lower =
      std::all_of(text.begin() + 1, text.end(), [](char c) { return !std::isupper(static_cast<unsigned char>(c)); });
  const bool rest_upper =
      std::all_of(text.begin() + 1, text.end(), [](char c) { return !std::islower(static_cast<unsigned char>(c)); });
  const bool first_upper = std::isupper(static_cast<unsigned char>(text[0])) != 0;
  if (!(rest_lower || (first_upper && rest_upper))) return std::nullopt;  // "tRUE", "TrUe"
  const std::string word = to_lower(text);
  for (const auto& [yes, no] : {std::pair{"y", "n"}, {"yes", "no"}, {"true", "false"}, {"on", "off"}}) {
    if (word == yes) return true;
    if (word == no) return false;
  }
  return std::nullopt;
}

}  // namespace

bool parse_bool(const YAML::Node& node, const std::string& path, const std::string& file) {
  // A quoted "true" is a string.
  std::optional<bool> value;
  if (node.IsScalar() && !is_quoted(node)) value = yaml_boolean(node.Scalar());
  if (!value) wrong(node, path, file, "true or false");
  return *value;
}

std::string parse_string(const YAML::Node& node, const std::string& path, const std::string& file) {
  if (!node.IsScalar()) wrong(node, path, file, "a string");
  return node.Scalar();
}

int parse_choice(const YAML::Node& node, const std::string& path, const std::string& file,
                 const std::vector<std::string>& names) {
  const std::string expected = "one of " + join(names, " | ");
  if (!node.IsScalar()) wrong(node, path, file, expected);
  const std::string value = to_lower(node.Scalar());
  for (std::size_t i = 0; i < names.size(); ++i)
    if (to_lower(names[i]) == value) return static_cast<int>(i);
  std::string message = "expected " + expected + ", got " + describe_node(node);
  if (const std::string guess = closest_match(node.Scalar(), names); !guess.empty())
    message += "; did you mean " + guess + "?";
  throw ScenarioError(file, path, message);
}

// --- Section ---------------------------------------------------------------------------------

namespace {
thread_local std::set<std::string>* key_access_log = nullptr;
}  // namespace

void set_key_access_log(std::set<std::string>* log) { key_access_log = log; }

Section::Section(YAML::Node node, std::string path, std::string file)
    : node_(std::move(node)), path_(std::move(path)), file_(std::move(file)) {
  if (present() && !node_.IsMap())
    throw ScenarioError(file_, path_, "expected a mapping of keys, got " + describe_node(node_));
}

YAML::Node Section::get(const std::string& key) const {
  if (key_access_log != nullptr) key_access_log->insert(path_of(key));
  if (!present()) return YAML::Node();
  const YAML::Node& map = node_;  // const subscript: never inserts
  YAML::Node child = map[key];
  if (!child.IsDefined()) return YAML::Node();
  return child;
}

bool Section::contains(const std::string& key) const {
  if (key_access_log != nullptr) key_access_log->insert(path_of(key));
  if (!present()) return false;
  for (auto it = node_.begin(); it != node_.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == key) return true;
  return false;
}

bool Section::has(const std::string& key) const { return !is_missing(get(key)); }

bool Section::is_auto(const std::string& key) const {
  const YAML::Node v = get(key);
  return v.IsDefined() && v.IsScalar() && v.Scalar() == "auto";
}

std::string Section::path_of(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

Section Section::child(const std::string& key) const { return Section(get(key), path_of(key), file_); }

void Section::fail(const std::string& key, const std::string& message) const {
  throw ScenarioError(file_, key.empty() ? path_ : path_of(key), message);
}

void Section::missing(const std::string& key, const std::string& hint) const {
  fail(key, "missing required key " + path_of(key) + (hint.empty() ? "" : " (" + hint + ")"));
}

std::optional<std::int64_t> Section::integer(const std::string& key, Bound bound) const {
  if (!has(key)) return std::nullopt;
  return parse_integer(get(key), path_of(key), file_, bound);
}

std::optional<int> Section::int_value(const std::string& key, Bound bound) const {
  if (!has(key)) return std::nullopt;
  return parse_int(get(key), path_of(key), file_, bound);
}

std::optional<double> Section::number(const std::string& key, Bound bound) const {
  if (!has(key)) return std::nullopt;
  return parse_number(get(key), path_of(key), file_, bound);
}

std::optional<bool> Section::boolean(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return parse_bool(get(key), path_of(key), file_);
}

std::optional<std::string> Section::string(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return parse_string(get(key), path_of(key), file_);
}

void Section::read(const std::string& key, int& target, Bound bound) const {
  if (auto v = int_value(key, bound)) target = *v;
}
void Section::read(const std::string& key, std::int64_t& target, Bound bound) const {
  if (auto v = integer(key, bound)) target = *v;
}
void Section::read(const std::string& key, double& target, Bound bound) const {
  if (auto v = number(key, bound)) target = *v;
}
void Section::read(const std::string& key, bool& target) const {
  if (auto v = boolean(key)) target = *v;
}
void Section::read(const std::string& key, std::string& target) const {
  if (auto v = string(key)) target = *v;
}
void Section::read(const std::string& key, std::optional<int>& target, Bound bound) const {
  if (auto v = int_value(key, bound)) target = *v;
}
void Section::read(const std::string& key, std::optional<double>& target, Bound bound) const {
  if (auto v = number(key, bound)) target = *v;
}
void Section::read(const std::string& key, std::optional<std::string>& target) const {
  if (auto v = string(key)) target = *v;
}

int Section::require_int(const std::string& key, Bound bound) const {
  if (!has(key)) missing(key);
  return *int_value(key, bound);
}
std::int64_t Section::require_integer(const std::string& key, Bound bound) const {
  if (!has(key)) missing(key);
  return *integer(key, bound);
}
double Section::require_number(const std::string& key, Bound bound) const {
  if (!has(key)) missing(key);
  return *number(key, bound);
}

}  // namespace trainsim::scenario_detail
