// End-to-end: every example's `trainsim run examples/<name>.yaml --json` against its golden file
// tests/golden/<name>.json, so that a change of the model shows as a list of changed numbers. The
// rules are scripts/golden's (`make golden` rewrites the files, `make golden-check` prints the same
// list): the fields of tests/golden/ignored-paths.txt are left out, numbers are equal within a
// relative 1e-9 (integers exactly), array elements are named by their kind/group/link/key/name fields
// where those name every element once, otherwise by position.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace trainsim_cli_test;

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;  // keeps trainsim's field order, so paths are listed in it

constexpr double kRelTol = 1e-9;
const char* const kIdKeys[] = {"kind", "group", "link", "key", "name"};
const char* const kHowToUpdate =
    "If the change is intended (a change of the model), run `make golden` and commit tests/golden/.";

fs::path source_dir() { return fs::path(TRAINSIM_SOURCE_DIR); }
fs::path golden_dir() { return source_dir() / "tests" / "golden"; }

std::vector<std::string> example_names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(source_dir() / "examples"))
    if (e.is_regular_file() && e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::set<std::string> golden_names() {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(golden_dir()))
    if (e.is_regular_file() && e.path().extension() == ".json") names.insert(e.path().stem().string());
  return names;
}

// tests/golden/ignored-paths.txt: one dotted path a line, '#' starts a comment.
std::vector<std::vector<std::string>> ignored_paths() {
  std::vector<std::vector<std::string>> paths;
  std::ifstream f(golden_dir() / "ignored-paths.txt");
  std::string line;
  while (std::getline(f, line)) {
    line = line.substr(0, line.find('#'));
    std::vector<std::string> keys;
    std::istringstream in(line);
    std::string word;
    in >> word;  // the path has no spaces; this trims the line
    std::istringstream parts(word);
    for (std::string k; std::getline(parts, k, '.');) keys.push_back(k);
    if (!keys.empty()) paths.push_back(std::move(keys));
  }
  return paths;
}

void drop_ignored(Json& doc) {
  for (const auto& keys : ignored_paths()) {
    Json* node = &doc;
    for (std::size_t i = 0; i + 1 < keys.size() && node != nullptr; ++i)
      node = node->is_object() && node->contains(keys[i]) ? &(*node)[keys[i]] : nullptr;
    if (node != nullptr && node->is_object()) node->erase(keys.back());
  }
}

// A value as compact JSON; an object or array longer than 300 characters is cut (a string never is).
std::string show(const Json& v) {
  std::string s = v.dump();
  if (s.size() > 300 && v.is_structured()) s = s.substr(0, 297) + "...";
  return s;
}

std::string relative_change(double old_v, double new_v) {
  if (old_v == 0) return "(was 0)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "(%+.3g%%)", (new_v - old_v) / std::fabs(old_v) * 100);
  return buf;
}

// The name of an array element from its identifying fields, or "" when it has none.
std::string label(const Json& e) {
  if (!e.is_object()) return "";
  std::string name;
  for (const char* k : kIdKeys)
    if (e.contains(k) && e[k].is_string()) name += (name.empty() ? "" : "/") + e[k].get<std::string>();
  return name;
}

// The element names of an array, or nothing when they do not name every element once.
std::vector<std::string> labels(const Json& arr) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const Json& e : arr) {
    std::string n = label(e);
    if (n.empty() || !seen.insert(n).second) return {};
    names.push_back(std::move(n));
  }
  return names;
}

using Changes = std::vector<std::pair<std::string, std::string>>;  // path, "old -> new"

void diff(const Json& old_v, const Json& new_v, const std::string& path, Changes& out) {
  auto child = [&](const std::string& key) { return path.empty() ? key : path + "." + key; };
  if (old_v.is_number() && new_v.is_number()) {
    bool same = false;
    if (old_v.is_number_integer() && new_v.is_number_integer()) {
      same = old_v == new_v;
    } else {
      const double a = old_v.get<double>();
      const double b = new_v.get<double>();
      same = std::fabs(a - b) <= kRelTol * std::max(std::fabs(a), std::fabs(b));
    }
    if (!same)
      out.emplace_back(
          path, show(old_v) + " -> " + show(new_v) + " " + relative_change(old_v.get<double>(), new_v.get<double>()));
  } else if (old_v.is_object() && new_v.is_object()) {
    for (const auto& [k, v] : old_v.items()) {
      if (new_v.contains(k))
        diff(v, new_v[k], child(k), out);
      else
        out.emplace_back(child(k), show(v) + " -> (absent)");
    }
    for (const auto& [k, v] : new_v.items())
      if (!old_v.contains(k)) out.emplace_back(child(k), "(absent) -> " + show(v));
  } else if (old_v.is_array() && new_v.is_array()) {
    const auto old_names = labels(old_v);
    const auto new_names = labels(new_v);
    const bool keyed =
        old_names.size() == old_v.size() && new_names.size() == new_v.size() && !(old_v.empty() && new_v.empty());
    if (keyed) {
      std::map<std::string, const Json*> old_by, new_by;
      for (std::size_t i = 0; i < old_v.size(); ++i) old_by[old_names[i]] = &old_v[i];
      for (std::size_t i = 0; i < new_v.size(); ++i) new_by[new_names[i]] = &new_v[i];
      for (std::size_t i = 0; i < old_v.size(); ++i) {
        const std::string p = path + "[" + old_names[i] + "]";
        if (const auto it = new_by.find(old_names[i]); it != new_by.end())
          diff(old_v[i], *it->second, p, out);
        else
          out.emplace_back(p, show(old_v[i]) + " -> (absent)");
      }
      for (std::size_t i = 0; i < new_v.size(); ++i)
        if (!old_by.count(new_names[i]))
          out.emplace_back(path + "[" + new_names[i] + "]", "(absent) -> " + show(new_v[i]));
    } else {
      for (std::size_t i = 0; i < std::max(old_v.size(), new_v.size()); ++i) {
        const std::string p = path + "[" + std::to_string(i) + "]";
        if (i >= new_v.size())
          out.emplace_back(p, show(old_v[i]) + " -> (absent)");
        else if (i >= old_v.size())
          out.emplace_back(p, "(absent) -> " + show(new_v[i]));
        else
          diff(old_v[i], new_v[i], p, out);
      }
    }
  } else if (old_v != new_v) {
    out.emplace_back(path, show(old_v) + " -> " + show(new_v));
  }
}

// What scripts/golden runs: from the repository root, with the repository's data/.
Json run_example(const std::string& name) {
  const fs::path out =
      fs::temp_directory_path() / ("trainsim_golden_" + name + "_" + std::to_string(getpid()) + ".json");
  const Result r =
      run_shell("(cd '" + source_dir().string() + "' && env -u TRAINSIM_DATA_DIR '" + std::string(TRAINSIM_BINARY) +
                "' run examples/" + name + ".yaml --json > '" + out.string() + "')");
  EXPECT_EQ(r.status, 0) << "trainsim run examples/" << name << ".yaml --json\n" << r.out;
  Json doc;
  if (r.status == 0) doc = Json::parse(std::ifstream(out));
  fs::remove(out);
  drop_ignored(doc);
  return doc;
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, ExampleOutputMatchesGoldenFile) {
  const std::string name = GetParam();
  const fs::path file = golden_dir() / (name + ".json");
  ASSERT_TRUE(fs::exists(file)) << "no golden file tests/golden/" << name << ".json for examples/" << name
                                << ".yaml: run `make golden` and commit tests/golden/.";
  Json golden = Json::parse(std::ifstream(file));
  drop_ignored(golden);
  const Json now = run_example(name);
  if (HasFailure()) return;
  Changes changes;
  diff(golden, now, "", changes);
  if (changes.empty()) return;
  std::string msg = name + ": " + std::to_string(changes.size()) + " value(s) differ from tests/golden/" + name +
                    ".json (golden -> now)\n";
  for (const auto& [path, text] : changes)
    msg += "  " + (path.empty() ? std::string("(top level)") : path) + ": " + text + "\n";
  ADD_FAILURE() << msg << kHowToUpdate;
}

INSTANTIATE_TEST_SUITE_P(Examples, Golden, ::testing::ValuesIn(example_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string n = param.param;
                           std::replace_if(
                               n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
                               '_');
                           return n;
                         });

// A new example needs its golden file, and a removed example takes its golden file with it.
TEST(GoldenFiles, OneForEveryExampleAndNoOther) {
  const auto examples = example_names();
  const std::set<std::string> wanted(examples.begin(), examples.end());
  const std::set<std::string> have = golden_names();
  for (const std::string& n : wanted)
    EXPECT_TRUE(have.count(n)) << "examples/" << n << ".yaml has no golden file tests/golden/" << n << ".json. "
                               << kHowToUpdate;
  for (const std::string& n : have)
    EXPECT_TRUE(wanted.count(n)) << "tests/golden/" << n << ".json has no example examples/" << n << ".yaml. "
                                 << kHowToUpdate;
}

// The comparison itself: a number changed beyond the tolerance is a difference named by its path,
// one within it is not, and a collective is matched by its kind and group, not by its position.
TEST(GoldenFiles, DiffNamesChangedPathsWithOldAndNewValues) {
  const Json old_v = Json::parse(R"({"t": 1.0, "n": 3, "comm": [{"kind": "all_gather", "group": "tp", "time_s": 2.0},
                                                                 {"kind": "all_reduce", "group": "dp", "time_s": 4.0}],
                                     "s": "a", "w": []})");
  const Json new_v =
      Json::parse(R"({"t": 1.0000000001, "n": 4, "comm": [{"kind": "all_reduce", "group": "dp", "time_s": 5.0},
                                                                          {"kind": "all_gather", "group": "tp", "time_s": 2.0}],
                                     "s": "b", "w": [{"key": "x"}], "extra": true})");
  Changes c;
  diff(old_v, new_v, "", c);
  const Changes expected = {{"n", "3 -> 4 (+33.3%)"},
                            {"comm[all_reduce/dp].time_s", "4.0 -> 5.0 (+25%)"},
                            {"s", "\"a\" -> \"b\""},
                            {"w[x]", "(absent) -> {\"key\":\"x\"}"},
                            {"extra", "(absent) -> true"}};
  EXPECT_EQ(c, expected);
}

}  // namespace
