#include "explore/sweep_spec.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <map>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "scenario/key_schema.hpp"

namespace trainsim::explore {

namespace {

// One `--vary` or `--zip` argument being parsed: every error names the flag and the whole text.
struct Arg {
  const char* flag;
  const std::string& text;
};

[[noreturn]] void arg_error(const Arg& arg, const std::string& message) {
  throw Error(std::string(arg.flag) + " '" + arg.text + "': " + message);
}

// Splits on commas that are not inside [..], {..} or quotes, so `recompute_num_layers=[4,0],[2,2]`
// is two values.
std::vector<std::string> split_items(const std::string& list, const Arg& arg) {
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  char quote = 0;
  for (const char c : list) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      items.push_back(trim(current));
      current.clear();
      continue;
    }
    current += c;
  }
  if (quote || depth != 0) arg_error(arg, "unbalanced quotes or brackets in the value list");
  items.push_back(trim(current));
  for (const auto& item : items)
    if (item.empty()) arg_error(arg, "empty value in the list (expected key=v1,v2,... or key=start:end:step)");
  return items;
}

std::optional<long long> parse_integer(const std::string& s) {
  const char* first = s.data() + (s.starts_with('+') ? 1 : 0);
  const char* last = s.data() + s.size();
  long long v = 0;
  const auto [end, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || end != last || first == last) return std::nullopt;
  return v;
}

std::optional<double> parse_number(const std::string& s) {
  const char* first = s.data() + (s.starts_with('+') ? 1 : 0);
  const char* last = s.data() + s.size();
  double v = 0;
  const auto [end, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || end != last || first == last || !std::isfinite(v)) return std::nullopt;
  return v;
}

// "a:b:step" with nothing that YAML would read as a mapping or a collection.
bool looks_like_range(const std::string& item) {
  if (item.find_first_of(" \t[]{}\"'") != std::string::npos) return false;
  std::size_t colons = 0;
  for (char c : item) colons += c == ':';
  return colons == 2;
}

void check_count(double count, const Arg& arg) {
  if (count > static_cast<double>(kMaxValuesPerAxis))
    arg_error(arg, fmt::format("the range expands to more than {} values", kMaxValuesPerAxis));
}

std::vector<SweepValue> expand_range(const std::string& item, const Arg& arg) {
  const auto c1 = item.find(':');
  const auto c2 = item.find(':', c1 + 1);
  const std::string parts[3] = {item.substr(0, c1), item.substr(c1 + 1, c2 - c1 - 1), item.substr(c2 + 1)};
  std::vector<SweepValue> out;

  const auto ia = parse_integer(parts[0]), ib = parse_integer(parts[1]), is = parse_integer(parts[2]);
  if (ia && ib && is) {  // integer range: exact arithmetic, values stay integers
    const long long a = *ia, b = *ib, step = *is;
    if (step == 0) arg_error(arg, "range '" + item + "' has step 0");
    if (b != a && (b > a) != (step > 0))
      arg_error(arg, "range '" + item + "' never reaches its end: the step has the wrong sign");
    // Unsigned arithmetic: no overflow even for ranges near the limits of long long.
    using U = unsigned long long;
    const U span = step > 0 ? U(b) - U(a) : U(a) - U(b);
    const U magnitude = step > 0 ? U(step) : U(0) - U(step);
    const U count = span / magnitude + 1;
    check_count(static_cast<double>(count), arg);
    for (U i = 0; i < count; ++i) {
      const auto v = static_cast<long long>(step > 0 ? U(a) + i * magnitude : U(a) - i * magnitude);
      out.push_back({std::to_string(v), static_cast<double>(v)});
    }
    return out;
  }

  const auto a = parse_number(parts[0]), b = parse_number(parts[1]), step = parse_number(parts[2]);
  if (!a || !b || !step)
    arg_error(arg, "range '" + item + "' is not numeric (expected start:end:step, e.g. 100:400:100)");
  if (*step == 0) arg_error(arg, "range '" + item + "' has step 0");
  if (*b != *a && ((*b - *a) > 0) != (*step > 0))
    arg_error(arg, "range '" + item + "' never reaches its end: the step has the wrong sign");
  // The relative tolerance keeps the end of 0.1:0.3:0.1 in despite binary rounding.
  const double steps = std::floor((*b - *a) / *step + 1e-9);
  check_count(steps + 1, arg);
  for (long long i = 0; i <= static_cast<long long>(steps); ++i) {
    const double v = *a + static_cast<double>(i) * *step;
    // 15 significant digits drop the rounding noise of a + i*step (0.30000000000000004 -> 0.3).
    const std::string text = fmt::format("{:.15g}", v);
    out.push_back({text, parse_number(text)});
  }
  return out;
}

SweepValue plain_value(const std::string& item, const Arg& arg) {
  YAML::Node node;
  try {
    node = YAML::Load(item);
  } catch (const YAML::Exception& e) { arg_error(arg, "cannot parse the value '" + item + "' as YAML: " + e.msg); }
  // Only unquoted scalars count as numbers: '"400"' is the string 400.
  const bool plain_scalar = node.IsScalar() && node.Tag() == "?";
  return {item, plain_scalar ? parse_number(item) : std::nullopt};
}

void check_key(const std::string& key, const Arg& arg) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    parts.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (parts.back().empty()) arg_error(arg, "empty component in the key '" + key + "'");
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  try {
    scenario_detail::check_override_path(parts);
  } catch (const ScenarioError& e) { arg_error(arg, e.detail()); }
}

std::string override_key(const std::string& text) {
  const auto eq = text.find('=');
  return trim(eq == std::string::npos ? text : text.substr(0, eq));
}

// The values of one `--vary` or `--zip` argument. `unique`: a value given twice is an error.
SweepKey parse_key_values(const Arg& arg, bool unique) {
  const std::string& text = arg.text;
  const auto eq = text.find('=');
  if (eq == std::string::npos) arg_error(arg, "expected key=v1,v2,... or key=start:end:step");
  SweepKey out;
  out.key = trim(text.substr(0, eq));
  if (out.key.empty()) arg_error(arg, "empty key before '='");
  const std::string list = trim(text.substr(eq + 1));
  if (list.empty()) arg_error(arg, "no values after '=' (expected key=v1,v2,... or key=start:end:step)");
  check_key(out.key, arg);

  std::set<std::string> seen;
  for (const std::string& item : split_items(list, arg)) {
    std::vector<SweepValue> values;
    if (looks_like_range(item))
      values = expand_range(item, arg);
    else
      values.push_back(plain_value(item, arg));
    for (auto& v : values) {
      if (unique && !seen.insert(v.text).second) arg_error(arg, "the value " + v.text + " appears twice");
      out.values.push_back(std::move(v));
    }
    if (out.values.size() > kMaxValuesPerAxis) arg_error(arg, fmt::format("more than {} values", kMaxValuesPerAxis));
  }
  return out;
}

// The zipped axis: every key with as many values as the others, and no two points alike (they
// would only simulate the same thing twice, which is surely not what was meant).
void check_zipped(const SweepAxis& zipped) {
  for (const auto& k : zipped.keys)
    if (k.values.size() != zipped.size()) {
      std::vector<std::string> counts;
      for (const auto& each : zipped.keys) counts.push_back(fmt::format("{} has {}", each.key, each.values.size()));
      throw Error("--zip: every zipped key needs the same number of values (the i-th values go together), but " +
                  join(counts));
    }
  std::map<std::vector<std::string>, std::size_t> first_seen;
  for (std::size_t i = 0; i < zipped.size(); ++i) {
    std::vector<std::string> point;
    for (const auto& k : zipped.keys) point.push_back(k.values[i].text);
    const auto [it, fresh] = first_seen.emplace(point, i);
    if (!fresh)
      throw Error(fmt::format("--zip: points {} and {} are both ({}); every zipped point must differ", it->second + 1,
                              i + 1, join(point)));
  }
}

}  // namespace

bool SweepKey::numeric() const {
  for (const auto& v : values)
    if (!v.number) return false;
  return !values.empty();
}

std::string SweepAxis::name() const {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : " + ") + k.key;
  return out;
}

std::string SweepAxis::step_label(std::size_t i) const {
  if (keys.size() == 1) return keys.front().values.at(i).text;
  std::vector<std::string> texts;
  for (const auto& k : keys) texts.push_back(k.values.at(i).text);
  return "(" + join(texts) + ")";
}

std::size_t Sweep::size() const {
  if (axes.empty()) return 0;
  std::size_t n = 1;
  for (const auto& a : axes) n *= a.size();
  return n;
}

std::size_t Sweep::key_count() const {
  std::size_t n = 0;
  for (const auto& a : axes) n += a.keys.size();
  return n;
}

std::size_t Sweep::stride(std::size_t axis) const {
  std::size_t s = 1;
  for (std::size_t k = axis + 1; k < axes.size(); ++k) s *= axes[k].size();
  return s;
}

std::size_t Sweep::value_index(std::size_t point, std::size_t axis) const {
  return (point / stride(axis)) % axes.at(axis).size();
}

const SweepValue& Sweep::value(std::size_t point, std::size_t axis, std::size_t key) const {
  return axes.at(axis).keys.at(key).values.at(value_index(point, axis));
}

std::vector<Overrides> Sweep::overrides(const std::vector<std::string>& base) const {
  std::vector<Overrides> out;
  out.reserve(size());
  for (std::size_t p = 0; p < size(); ++p) {
    Overrides o = base;
    for (std::size_t a = 0; a < axes.size(); ++a)
      for (std::size_t k = 0; k < axes[a].keys.size(); ++k)
        o.push_back(axes[a].keys[k].key + "=" + value(p, a, k).text);
    out.push_back(std::move(o));
  }
  return out;
}

SweepKey parse_vary(const std::string& text) { return parse_key_values({"--vary", text}, true); }

SweepKey parse_zip(const std::string& text) { return parse_key_values({"--zip", text}, false); }

Sweep make_sweep(const std::vector<std::string>& vary_texts, const std::vector<std::string>& zip_texts,
                 std::size_t zip_position) {
  if (vary_texts.empty() && zip_texts.empty())
    throw Error(
        "--vary: give at least one key to vary, e.g. --vary cluster.nic_gbps=100,200,400 (or keys that "
        "change together with --zip)");
  std::vector<SweepAxis> varied;
  for (const auto& text : vary_texts) {
    SweepKey key = parse_vary(text);
    for (const auto& other : varied)
      if (other.first().key == key.key)
        arg_error({"--vary", text}, "the key " + key.key + " is varied twice; list all its values in one --vary");
    varied.push_back({{std::move(key)}, false});
  }

  Sweep sweep;
  sweep.axes = std::move(varied);
  if (!zip_texts.empty()) {
    SweepAxis zipped{{}, true};
    for (const auto& text : zip_texts) {
      SweepKey key = parse_zip(text);
      for (const auto& other : zipped.keys)
        if (other.key == key.key)
          arg_error({"--zip", text}, "the key " + key.key + " is zipped twice; list all its values in one --zip");
      for (const auto& axis : sweep.axes)
        if (axis.first().key == key.key)
          arg_error({"--zip", text},
                    "the key " + key.key + " is also given to --vary; a key is either varied or zipped");
      zipped.keys.push_back(std::move(key));
    }
    check_zipped(zipped);
    const auto at = static_cast<std::ptrdiff_t>(std::min(zip_position, sweep.axes.size()));
    sweep.axes.insert(sweep.axes.begin() + at, std::move(zipped));
  }

  double points = 1;
  for (const auto& axis : sweep.axes) {
    points *= static_cast<double>(axis.size());
    if (points > static_cast<double>(kMaxSweepPoints))
      throw Error(
          fmt::format("{} {}: the sweep would have more than {} points", axis.flag(), axis.name(), kMaxSweepPoints));
  }
  return sweep;
}

void check_no_set_conflict(const Sweep& sweep, const std::vector<std::string>& sets) {
  for (const auto& s : sets)
    for (const auto& axis : sweep.axes)
      for (const auto& k : axis.keys)
        if (override_key(s) == k.key)
          throw Error("--set '" + s + "': " + k.key + " is also given to " + axis.flag() + "; drop one of them");
}

}  // namespace trainsim::explore
