// The statistics behind `trainsim validate`: which group a case is in, which field summarises a case,
// and the bias (signed median of the headline time error), median and p90 of the absolute headline
// errors over the cases that could be simulated.
#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "report/validation_report.hpp"

namespace trainsim {

double ValidationField::time_error() const {
  if (field == "iteration_time_s") return error();
  return measured / simulated - 1.0;  // a throughput: the time of the same work scales as 1 / it
}

namespace {

std::vector<std::string_view> split_dashes(std::string_view id) {
  std::vector<std::string_view> tokens;
  for (std::size_t start = 0;;) {
    const std::size_t dash = id.find('-', start);
    tokens.push_back(id.substr(start, dash == std::string_view::npos ? std::string_view::npos : dash - start));
    if (dash == std::string_view::npos) return tokens;
    start = dash + 1;
  }
}

bool is_lower_alpha(char c) { return c >= 'a' && c <= 'z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "a100_40gb" -> "a100", "mi300x_192gb" -> "mi300x": letters, digits, letters, '_', digits, "gb".
// Empty when the token is not of that form.
std::string_view gpu_of_memory_token(std::string_view t) {
  std::size_t i = 0;
  while (i < t.size() && is_lower_alpha(t[i])) ++i;
  const std::size_t letters = i;
  while (i < t.size() && is_digit(t[i])) ++i;
  const std::size_t digits_end = i;
  while (i < t.size() && is_lower_alpha(t[i])) ++i;
  if (letters == 0 || digits_end == letters || i >= t.size() || t[i] != '_') return {};
  const std::size_t gpu_end = i++;
  const std::size_t mem_start = i;
  while (i < t.size() && is_digit(t[i])) ++i;
  if (i == mem_start || t.substr(i) != "gb") return {};
  return t.substr(0, gpu_end);
}

// "amp_bf16" / "bf16" / "fp8" -> "bf16" / "bf16" / "fp8": a number format (bf, fp, tf, mxfp, nvfp
// followed by digits), optionally after "amp_". Empty when the token is not a precision.
std::string_view precision_token(std::string_view t) {
  if (t.starts_with("amp_")) t.remove_prefix(4);
  std::size_t i = 0;
  while (i < t.size() && is_lower_alpha(t[i])) ++i;
  const std::string_view letters = t.substr(0, i);
  if (letters != "bf" && letters != "fp" && letters != "tf" && letters != "mxfp" && letters != "nvfp") return {};
  const std::size_t digits = i;
  while (i < t.size() && is_digit(t[i])) ++i;
  return (i == digits || i != t.size()) ? std::string_view{} : t;
}

}  // namespace

std::string validation_group(std::string_view case_id) {
  const std::vector<std::string_view> tokens = split_dashes(case_id);
  std::string group(tokens[0]);
  if (tokens.size() < 2) return group;
  const std::string_view gpu = gpu_of_memory_token(tokens[1]);
  if (gpu.empty()) return group;
  group += fmt::format("-{}", gpu);
  if (tokens.size() >= 3) {
    const std::string_view precision = precision_token(tokens[2]);
    if (!precision.empty()) group += fmt::format("-{}", precision);
  }
  return group;
}

std::string ValidationCase::memory_note() const {
  if (!over_memory()) return {};
  return fmt::format("needs {:.1f} GiB per GPU of {:.1f}", memory_needed_gib, memory_capacity_gib);
}

const ValidationField* ValidationCase::headline() const {
  // Iteration time is what every other throughput figure is derived from, so it is the most
  // direct check; the rest follow in the order the spec's reference block lists them.
  static constexpr std::array<std::string_view, 6> kPriority = {"iteration_time_s",     "tflops_per_gpu", "mfu", "hfu",
                                                                "tokens_per_s_per_gpu", "busbw_GBps"};
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
  std::vector<double> abs_errors, time_errors;
  for (const ValidationCase& c : cases) {
    ++s.cases;
    if (!c.error.empty()) {
      ++s.failed;
      continue;
    }
    ++s.simulated;
    const ValidationField* h = c.headline();
    // A zero measurement has no relative error; leave it out rather than poison the median.
    if (h != nullptr && std::isfinite(h->error())) {
      abs_errors.push_back(std::fabs(h->error()));
      // A zero simulated throughput has no finite time error; it still counts in |error|.
      if (std::isfinite(h->time_error())) time_errors.push_back(h->time_error());
    }
  }
  s.samples = static_cast<int>(abs_errors.size());
  s.bias = percentile(std::move(time_errors), 0.5);
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

std::map<std::string, ValidationSummary> summarize_by_generation(const std::vector<ValidationCase>& cases) {
  return summarize_by(
      cases, [](const ValidationCase& c) { return c.generation.empty() ? std::string("unknown") : c.generation; });
}

}  // namespace trainsim
