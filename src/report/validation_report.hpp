#pragma once
// `trainsim validate`: per case, measured vs simulated for each reference field present, the
// signed relative error, then per group of cases and per GPU generation: the bias (signed median of
// the headline error as an iteration-time error), median and p90 |headline error|; and the
// per-group record that CI compares against (`--record` / `--check`, docs/validation.md).
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim {

struct ValidationField {
  std::string field;  // "iteration_time_s", "tflops_per_gpu", "mfu", "hfu", "tokens_per_s_per_gpu", "busbw_GBps"
  double measured = 0;
  double simulated = 0;
  double error() const { return (simulated - measured) / measured; }  // signed, relative
  // The same error as an error of the time the work takes (negative = simulated faster than
  // measured): error() for iteration_time_s; for a throughput (every other field: higher is
  // faster) measured / simulated - 1, the error of the time that throughput implies.
  double time_error() const;
};

// One measured point of a collective benchmark case and what `trainsim nccl-test` predicts for it.
struct CollectivePointComparison {
  std::int64_t size = 0;  // bytes, nccl-tests' size column
  double measured_busbw_GBps = 0, simulated_busbw_GBps = 0;
  std::string algorithm, protocol;
  std::string measured_algorithm;  // what the source says NCCL picked, if it says
};

struct ValidationCase {
  std::string name;   // file stem
  std::string group;  // validation_group(name)
  std::string gpu;
  std::string confidence;
  std::vector<ValidationField> fields;
  std::string error;                              // non-empty: the case could not be simulated (message)
  std::string op;                                 // collective cases: the collective ("all_reduce", ...)
  std::vector<CollectivePointComparison> points;  // collective cases: every measured point
  // The field whose error summarises the case: iteration_time_s if present, else tflops_per_gpu,
  // mfu, hfu, tokens_per_s_per_gpu, busbw_GBps.
  const ValidationField* headline() const;
  std::string generation;  // the GPU's architecture ("ampere", "hopper", ...); empty: not known
  // Training cases trainsim's memory model says do not fit although the measured run did: the peak GiB per GPU it
  // needs and the GPU's capacity (both 0 when it fits or for collective cases). Simulated anyway and listed apart.
  double memory_needed_gib = 0, memory_capacity_gib = 0;
  bool over_memory() const { return memory_needed_gib > 0; }
  std::string memory_note() const;  // "needs 102.2 GiB per GPU of 95.6"; empty when it fits
};

// The group a case id belongs to (the rule is in docs/validation.md): the id's first '-'-separated
// token (its source: "megatron2021", "mcore", "coll", ...); where the second token names a GPU with
// its memory as `<gpu>_<n>gb` (llm-foundry's naming: "a100_40gb"), "-<gpu>" and then the third token,
// the precision, without an "amp_" prefix, are appended: "llmfoundry-h100-fp8".
std::string validation_group(std::string_view case_id);

struct ValidationSummary {
  int cases = 0, simulated = 0, failed = 0;
  int samples = 0;  // simulated cases with a finite headline error (the n of the statistics below)
  double bias = 0;  // signed median of the headline time_error(): negative = simulated faster
  double median_abs_error = 0, p90_abs_error = 0;  // over |headline error()|
};

ValidationSummary summarize(const std::vector<ValidationCase>& cases);
void write_validation_table(std::ostream& out, const std::vector<ValidationCase>& cases);
nlohmann::ordered_json validation_to_json(const std::vector<ValidationCase>& cases);

// docs/accuracy.md (`make accuracy`): how it was generated, summary by group and GPU, per-case table.
void write_validation_markdown(std::ostream& out, const std::vector<ValidationCase>& cases);

// summarize() over the cases of each group / each GPU, keyed (and so ordered) by name.
std::map<std::string, ValidationSummary> summarize_by_group(const std::vector<ValidationCase>& cases);
std::map<std::string, ValidationSummary> summarize_by_gpu(const std::vector<ValidationCase>& cases);
// By GPU generation (ValidationCase::generation; "unknown" where empty).
std::map<std::string, ValidationSummary> summarize_by_generation(const std::vector<ValidationCase>& cases);

// What `make accuracy` records (tests/accuracy/groups-recorded.json) and CI compares against:
// the summary of every group and the ids of the cases that could not be simulated.
struct AccuracyRecord {
  std::map<std::string, ValidationSummary> groups;
  std::vector<std::string> failed_cases;  // sorted
};
AccuracyRecord make_accuracy_record(const std::vector<ValidationCase>& cases);
// Numbers rounded to 1e-6 so that the committed file diffs readably; key order fixed.
nlohmann::ordered_json accuracy_record_to_json(const AccuracyRecord& record);
// Throws Error naming what is missing or mistyped.
AccuracyRecord accuracy_record_from_json(const nlohmann::json& j);

enum class GroupVerdict { Unchanged, Improved, Regressed, Missing, New };
struct GroupComparison {
  std::string group;
  std::optional<ValidationSummary> recorded, current;
  double delta_points = 0;  // current - recorded median |error|, in percentage points
  GroupVerdict verdict = GroupVerdict::Unchanged;
};
struct AccuracyComparison {
  double tolerance_points = 1.0;
  std::vector<GroupComparison> groups;       // every group of either side, by name
  std::vector<std::string> newly_failed;     // failed now, not recorded as failed
  std::vector<std::string> newly_simulated;  // recorded as failed, simulated now
  bool passed() const;                       // no group regressed or missing, no case newly failed
  bool re_record() const;                    // something improved or appeared: `make accuracy` would record it
};
// A group regresses when its median |error| is more than tolerance_points above the recorded one;
// one that is recorded but absent now is Missing (fails); a new one passes.
AccuracyComparison compare_accuracy(const AccuracyRecord& recorded, const AccuracyRecord& current,
                                    double tolerance_points = 1.0);
// The per-group table (now vs recorded) and the verdict, for CI logs.
void write_accuracy_comparison(std::ostream& out, const AccuracyComparison& comparison);

// Percentile with linear interpolation between closest ranks (q in [0,1]); 0 for empty input.
double percentile(std::vector<double> values, double q);

}  // namespace trainsim
