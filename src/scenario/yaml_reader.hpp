#pragma once
// Typed access to the scenario's YAML tree. Every getter knows the full key path of what it reads,
// so a wrong value becomes "model.num_layers: expected a positive integer, got 'abc'" rather than
// a yaml-cpp exception. Absent keys and explicit nulls both mean "not given" (the spec writes
// optional keys as `key: null`).
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/error.hpp"

namespace trainsim::scenario_detail {

// Which integers / numbers a key accepts.
enum class Bound { Any, NonNegative, Positive };

template <class E>
struct EnumName {
  const char* name;
  E value;
};

// "positive integer", "non-negative number", ...
std::string describe_expected(const char* what, Bound bound);
// How a node looks to the user: 'abc', a list, a mapping.
std::string describe_node(const YAML::Node& node);

// Scalars read from one node (used for list elements and by Section).
std::int64_t parse_integer(const YAML::Node& node, const std::string& path, const std::string& file, Bound bound);
int parse_int(const YAML::Node& node, const std::string& path, const std::string& file, Bound bound);
double parse_number(const YAML::Node& node, const std::string& path, const std::string& file, Bound bound);
bool parse_bool(const YAML::Node& node, const std::string& path, const std::string& file);
std::string parse_string(const YAML::Node& node, const std::string& path, const std::string& file);
// Case-insensitive match against `names`; the error lists the allowed values.
int parse_choice(const YAML::Node& node, const std::string& path, const std::string& file,
                 const std::vector<std::string>& names);

// True for an absent key or an explicit null (`key:`, `key: null`, `key: ~`).
bool is_missing(const YAML::Node& node);

// For the test that checks the key table against the readers: while a log is set (on this thread), every key path
// a Section looks up (get, has, contains, read, child, ...) is added to it, list indices as written
// ("faults[0].kind"). nullptr (the default) stops logging.
void set_key_access_log(std::set<std::string>* log);

// One mapping of the tree, e.g. `parallelism` or `cluster.network`.
class Section {
 public:
  // `node` may be undefined or null: the section is then empty and every key is "not given".
  Section(YAML::Node node, std::string path, std::string file);

  bool present() const { return !is_missing(node_); }
  bool has(const std::string& key) const;       // given with a non-null value
  bool contains(const std::string& key) const;  // written at all, even as null (null can override a preset)
  bool is_auto(const std::string& key) const;   // given as the word `auto` (a key whose default is derived)
  YAML::Node get(const std::string& key) const;
  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  std::string path_of(const std::string& key) const;

  // A nested mapping; error if the key holds a scalar or a list.
  Section child(const std::string& key) const;

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  [[noreturn]] void missing(const std::string& key, const std::string& hint = "") const;

  std::optional<std::int64_t> integer(const std::string& key, Bound bound) const;
  std::optional<int> int_value(const std::string& key, Bound bound) const;
  std::optional<double> number(const std::string& key, Bound bound) const;
  std::optional<bool> boolean(const std::string& key) const;
  std::optional<std::string> string(const std::string& key) const;

  template <class E>
  std::optional<E> choice(const std::string& key, std::initializer_list<EnumName<E>> names) const {
    if (!has(key)) return std::nullopt;
    std::vector<std::string> labels;
    for (const auto& n : names) labels.emplace_back(n.name);
    const int index = parse_choice(get(key), path_of(key), file_, labels);
    return (names.begin() + index)->value;
  }

  // A choice among a registry's entries (each with a `name` and an `id`), matched and listed in the registry's order.
  template <class Entry>
  std::optional<std::remove_cv_t<decltype(Entry::id)>> choice(const std::string& key,
                                                              std::span<const Entry> entries) const {
    if (!has(key)) return std::nullopt;
    std::vector<std::string> labels;
    for (const Entry& e : entries) labels.emplace_back(e.name);
    const int index = parse_choice(get(key), path_of(key), file_, labels);
    return entries[static_cast<std::size_t>(index)].id;
  }

  // Assign when given; leave `target` (the default) alone otherwise.
  void read(const std::string& key, int& target, Bound bound) const;
  void read(const std::string& key, std::int64_t& target, Bound bound) const;
  void read(const std::string& key, double& target, Bound bound) const;
  void read(const std::string& key, bool& target) const;
  void read(const std::string& key, std::string& target) const;
  void read(const std::string& key, std::optional<int>& target, Bound bound) const;
  void read(const std::string& key, std::optional<double>& target, Bound bound) const;
  void read(const std::string& key, std::optional<std::string>& target) const;

  // Required values: a ScenarioError naming the key when absent.
  int require_int(const std::string& key, Bound bound) const;
  std::int64_t require_integer(const std::string& key, Bound bound) const;
  double require_number(const std::string& key, Bound bound) const;

 private:
  YAML::Node node_;
  std::string path_, file_;
};

}  // namespace trainsim::scenario_detail
