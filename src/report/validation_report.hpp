#pragma once
// `trainsim validate`: per case, measured vs simulated for each reference field present, the
// signed relative error, then median and p90 |error| overall and by source group.
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim {

struct ValidationField {
  std::string field;     // "iteration_time_s", "tflops_per_gpu", "mfu", "hfu", "tokens_per_s_per_gpu", "busbw_GBps"
  double measured = 0;
  double simulated = 0;
  double error() const { return (simulated - measured) / measured; }  // signed, relative
};

// One measured point of a collective benchmark case and what `trainsim nccl-test` predicts for it.
struct CollectivePointComparison {
  std::int64_t size = 0;  // bytes, nccl-tests' size column
  double measured_busbw_GBps = 0, simulated_busbw_GBps = 0;
  std::string algorithm, protocol;
  std::string measured_algorithm;  // what the source says NCCL picked, if it says
};

struct ValidationCase {
  std::string name;       // file stem
  std::string group;      // id prefix before the first '-' ("megatron2021", "llmfoundry", ...)
  std::string gpu;
  std::string confidence;
  std::vector<ValidationField> fields;
  std::string error;      // non-empty: the case could not be simulated (message)
  std::string op;         // collective cases: the collective ("all_reduce", ...)
  std::vector<CollectivePointComparison> points;  // collective cases: every measured point
  // The field whose error summarises the case: iteration_time_s if present, else tflops_per_gpu,
  // mfu, hfu, tokens_per_s_per_gpu, busbw_GBps.
  const ValidationField* headline() const;
};

struct ValidationSummary {
  int cases = 0, simulated = 0, failed = 0;
  double median_abs_error = 0, p90_abs_error = 0;  // over headline errors
};

ValidationSummary summarize(const std::vector<ValidationCase>& cases);
void write_validation_table(std::ostream& out, const std::vector<ValidationCase>& cases);
nlohmann::ordered_json validation_to_json(const std::vector<ValidationCase>& cases);

// docs/accuracy.md (`make accuracy`): how it was generated, summary by group and GPU, per-case table.
void write_validation_markdown(std::ostream& out, const std::vector<ValidationCase>& cases);

// summarize() over the cases of each group / each GPU, keyed (and so ordered) by name.
std::map<std::string, ValidationSummary> summarize_by_group(const std::vector<ValidationCase>& cases);
std::map<std::string, ValidationSummary> summarize_by_gpu(const std::vector<ValidationCase>& cases);

// Percentile with linear interpolation between closest ranks (q in [0,1]); 0 for empty input.
double percentile(std::vector<double> values, double q);

}  // namespace trainsim
