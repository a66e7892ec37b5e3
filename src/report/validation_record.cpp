// The per-group accuracy record (`trainsim validate --record FILE`, written by `make accuracy`) and
// the CI comparison against it (`--check FILE`): a group whose median |headline error| is more than
// the tolerance above its recorded value, a recorded group that is gone, or a case that newly fails
// to simulate fails the check.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "report/format_utils.hpp"
#include "report/validation_report.hpp"

namespace trainsim {

namespace {

double rounded(double v) { return std::round(v * 1e6) / 1e6; }

nlohmann::ordered_json group_json(const ValidationSummary& s) {
  nlohmann::ordered_json j;
  j["cases"] = s.cases;
  j["simulated"] = s.simulated;
  j["failed"] = s.failed;
  j["samples"] = s.samples;
  j["bias"] = rounded(s.bias);
  j["median_abs_error"] = rounded(s.median_abs_error);
  j["p90_abs_error"] = rounded(s.p90_abs_error);
  return j;
}

template <typename T>
T required(const nlohmann::json& j, const std::string& where, const char* key) {
  if (!j.is_object() || !j.contains(key)) throw Error(fmt::format("accuracy record: {} has no '{}'", where, key));
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw Error(fmt::format("accuracy record: {}.{} has the wrong type", where, key));
  }
}

std::string verdict_text(const GroupComparison& g, double tolerance) {
  switch (g.verdict) {
    case GroupVerdict::Unchanged: return "ok";
    case GroupVerdict::Improved: return "improved";
    case GroupVerdict::Regressed: return fmt::format("REGRESSED (> {:.2f} points)", tolerance);
    case GroupVerdict::Missing: return "MISSING";
    case GroupVerdict::New: return "new";
  }
  return "";
}

}  // namespace

AccuracyRecord make_accuracy_record(const std::vector<ValidationCase>& cases) {
  AccuracyRecord r;
  r.groups = summarize_by_group(cases);
  for (const ValidationCase& c : cases)
    if (!c.error.empty()) r.failed_cases.push_back(c.name);
  std::sort(r.failed_cases.begin(), r.failed_cases.end());
  return r;
}

nlohmann::ordered_json accuracy_record_to_json(const AccuracyRecord& record) {
  nlohmann::ordered_json j;
  j["about"] =
      "Written by `make accuracy` (trainsim validate ... --record); do not edit by hand. CI "
      "(`make accuracy-check`, trainsim validate ... --check) fails when a group's median |headline error| is "
      "more than 1 point above the value here, when a group is gone, or when a case not listed in "
      "failed_cases fails to simulate. Errors are fractions; bias is the signed median of the headline "
      "error as an iteration-time error (negative = simulated faster than measured).";
  nlohmann::ordered_json groups = nlohmann::ordered_json::object();
  for (const auto& [name, s] : record.groups) groups[name] = group_json(s);
  j["groups"] = std::move(groups);
  j["failed_cases"] = record.failed_cases;
  return j;
}

AccuracyRecord accuracy_record_from_json(const nlohmann::json& j) {
  AccuracyRecord r;
  const auto groups = required<nlohmann::json>(j, "the file", "groups");
  if (!groups.is_object()) throw Error("accuracy record: 'groups' must be an object");
  for (const auto& [name, g] : groups.items()) {
    const std::string where = "groups." + name;
    ValidationSummary s;
    s.cases = required<int>(g, where, "cases");
    s.simulated = required<int>(g, where, "simulated");
    s.failed = required<int>(g, where, "failed");
    s.samples = g.contains("samples") ? required<int>(g, where, "samples") : s.simulated;
    s.bias = g.contains("bias") ? required<double>(g, where, "bias") : 0.0;
    s.median_abs_error = required<double>(g, where, "median_abs_error");
    s.p90_abs_error = g.contains("p90_abs_error") ? required<double>(g, where, "p90_abs_error") : 0.0;
    r.groups[name] = s;
  }
  if (j.contains("failed_cases")) r.failed_cases = required<std::vector<std::string>>(j, "the file", "failed_cases");
  std::sort(r.failed_cases.begin(), r.failed_cases.end());
  return r;
}

bool AccuracyComparison::passed() const {
  if (!newly_failed.empty()) return false;
  return std::none_of(groups.begin(), groups.end(), [](const GroupComparison& g) {
    return g.verdict == GroupVerdict::Regressed || g.verdict == GroupVerdict::Missing;
  });
}

bool AccuracyComparison::re_record() const {
  if (!newly_simulated.empty()) return true;
  return std::any_of(groups.begin(), groups.end(), [](const GroupComparison& g) {
    return g.verdict == GroupVerdict::Improved || g.verdict == GroupVerdict::New;
  });
}

AccuracyComparison compare_accuracy(const AccuracyRecord& recorded, const AccuracyRecord& current,
                                    double tolerance_points) {
  AccuracyComparison cmp;
  cmp.tolerance_points = tolerance_points;
  std::set<std::string> names;
  for (const auto& [name, s] : recorded.groups) names.insert(name);
  for (const auto& [name, s] : current.groups) names.insert(name);
  // Below this a change is rounding of the recorded file, not a change of the model.
  constexpr double kNoise = 1e-3;
  for (const std::string& name : names) {
    GroupComparison g;
    g.group = name;
    if (auto it = recorded.groups.find(name); it != recorded.groups.end()) g.recorded = it->second;
    if (auto it = current.groups.find(name); it != current.groups.end()) g.current = it->second;
    if (!g.current) {
      g.verdict = GroupVerdict::Missing;
    } else if (!g.recorded) {
      g.verdict = GroupVerdict::New;
    } else {
      g.delta_points = 100.0 * (g.current->median_abs_error - g.recorded->median_abs_error);
      if (g.delta_points > tolerance_points)
        g.verdict = GroupVerdict::Regressed;
      else if (g.delta_points < -kNoise)
        g.verdict = GroupVerdict::Improved;
      else
        g.verdict = GroupVerdict::Unchanged;
    }
    cmp.groups.push_back(std::move(g));
  }
  std::set_difference(current.failed_cases.begin(), current.failed_cases.end(), recorded.failed_cases.begin(),
                      recorded.failed_cases.end(), std::back_inserter(cmp.newly_failed));
  std::set_difference(recorded.failed_cases.begin(), recorded.failed_cases.end(), current.failed_cases.begin(),
                      current.failed_cases.end(), std::back_inserter(cmp.newly_simulated));
  return cmp;
}

void write_accuracy_comparison(std::ostream& out, const AccuracyComparison& cmp) {
  using report_format::abs_percent;
  using report_format::signed_percent;
  fmt::memory_buffer buf;
  auto put = std::back_inserter(buf);
  std::size_t w = 5;
  for (const GroupComparison& g : cmp.groups) w = std::max(w, g.group.size());
  fmt::format_to(put, "{:<{}}  {:>5}  {:>6}  {:>7}  {:>12}  {:>8}  {:>9}  {:>8}  {}\n", "group", w, "n", "failed",
                 "bias", "median |err|", "recorded", "change", "p90 |err|", "verdict");
  for (const GroupComparison& g : cmp.groups) {
    const ValidationSummary* now = g.current ? &*g.current : nullptr;
    const bool any = now != nullptr && now->samples > 0;
    fmt::format_to(
        put, "{:<{}}  {:>5}  {:>6}  {:>7}  {:>12}  {:>8}  {:>9}  {:>8}  {}\n", g.group, w,
        now ? fmt::format("{}", now->cases) : "-", now ? fmt::format("{}", now->failed) : "-",
        any ? signed_percent(now->bias) : "-", any ? abs_percent(now->median_abs_error) : "-",
        g.recorded ? fmt::format("{:.2f}%", 100.0 * g.recorded->median_abs_error) : "-",
        // |change| below the printed precision reads "+0.00", never "-0.00".
        g.recorded && now ? fmt::format("{:+.2f}", std::fabs(g.delta_points) < 0.005 ? 0.0 : g.delta_points) : "-",
        any ? abs_percent(now->p90_abs_error) : "-", verdict_text(g, cmp.tolerance_points));
  }
  fmt::format_to(put,
                 "(n = cases; bias = signed median of the headline error as an iteration-time error, negative = "
                 "simulated faster; change = median |err| now - recorded, in points)\n");
  for (const std::string& name : cmp.newly_failed) fmt::format_to(put, "newly failing to simulate: {}\n", name);
  for (const std::string& name : cmp.newly_simulated)
    fmt::format_to(put, "now simulated (recorded as failing): {}\n", name);
  if (cmp.passed()) {
    fmt::format_to(put, "accuracy check: passed (no group's median |error| more than {:.2f} points above the record)\n",
                   cmp.tolerance_points);
  } else {
    fmt::format_to(put, "accuracy check: FAILED: ");
    std::vector<std::string> why;
    for (const GroupComparison& g : cmp.groups) {
      if (g.verdict == GroupVerdict::Regressed)
        why.push_back(fmt::format("{} regressed by {:.2f} points", g.group, g.delta_points));
      if (g.verdict == GroupVerdict::Missing) why.push_back(fmt::format("group {} is gone", g.group));
    }
    if (!cmp.newly_failed.empty())
      why.push_back(fmt::format("{} case(s) newly fail to simulate", cmp.newly_failed.size()));
    fmt::format_to(put, "{}\n", fmt::join(why, "; "));
  }
  if (cmp.re_record())
    fmt::format_to(put,
                   "accuracy improved or changed shape: re-record with `make accuracy` and commit "
                   "tests/accuracy/groups-recorded.json and docs/accuracy*.md\n");
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

}  // namespace trainsim
