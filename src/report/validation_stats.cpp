// The statistics behind `trainsim validate`: which field summarises a case, and median / p90 of
// the absolute headline errors over the cases that could be simulated.
#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"
#include "report/validation_report.hpp"

namespace trainsim {

const ValidationField* ValidationCase::headline() const {
  // Iteration time is what every other throughput figure is derived from, so it is the most
  // direct check; the rest follow in the order the spec's reference block lists them.
  static constexpr std::array<std::string_view, 6> kPriority = {
      "iteration_time_s", "tflops_per_gpu", "mfu", "hfu", "tokens_per_s_per_gpu", "busbw_GBps"};
  for (std::string_view wanted : kPriority) {
    for (const ValidationField& f : fields) {
      if (f.field == wanted) return &f;
    }
  }
  return nullptr;
}

double percentile(std::vector<double> values, double q) {
  if (!(q >= 0.0 && q <= 1.0)) throw Error(fmt::format("percentile: q must be in [0, 1], got {}", q));
  // NaN has no place in an ordering (and would break std::sort's contract): drop it.
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }), values.end());
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  // Linear interpolation between closest ranks (Hyndman & Fan type 7, numpy's default):
  // position h = q (n - 1), value = x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]).
  const double h = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = h - static_cast<double>(lo);
  return values[lo] + frac * (values[hi] - values[lo]);
}

ValidationSummary summarize(const std::vector<ValidationCase>& cases) {
  ValidationSummary s;
  std::vector<double> abs_errors;
  for (const ValidationCase& c : cases) {
    ++s.cases;
    if (!c.error.empty()) {
      ++s.failed;
      continue;
    }
    ++s.simulated;
    const ValidationField* h = c.headline();
    // A zero measurement has no relative error; leave it out rather than poison the median.
    if (h != nullptr && std::isfinite(h->error())) abs_errors.push_back(std::fabs(h->error()));
  }
  s.median_abs_error = percentile(abs_errors, 0.5);
  s.p90_abs_error = percentile(std::move(abs_errors), 0.9);
  return s;
}

namespace {

template <typename Key>
std::map<std::string, ValidationSummary> summarize_by(const std::vector<ValidationCase>& cases, Key key) {
  std::map<std::string, std::vector<ValidationCase>> buckets;
  for (const ValidationCase& c : cases) {
    std::string k = key(c);
    buckets[k.empty() ? "(none)" : k].push_back(c);
  }
  std::map<std::string, ValidationSummary> out;
  for (const auto& [k, members] : buckets) out[k] = summarize(members);
  return out;
}

}  // namespace

std::map<std::string, ValidationSummary> summarize_by_group(const std::vector<ValidationCase>& cases) {
  return summarize_by(cases, [](const ValidationCase& c) { return c.group; });
}

std::map<std::string, ValidationSummary> summarize_by_gpu(const std::vector<ValidationCase>& cases) {
  return summarize_by(cases, [](const ValidationCase& c) { return c.gpu; });
}

}  // namespace trainsim
