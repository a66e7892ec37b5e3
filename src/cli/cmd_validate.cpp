// `trainsim validate PATH...`: run every scenario with a `reference:` block and compare. A case
// that cannot be loaded or simulated is a failed row, never the end of the run, and makes the exit
// status 1 once the table is out; a large deviation from the reference is a result, not a failure
// (exit 0). `--record FILE` writes the per-group record CI compares against; `--check FILE`
// compares with it instead (exit 1 when a group regressed, is gone, or a case newly fails: the
// cases the record lists as failing are known and pass).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "cli/thread_count.hpp"
#include "trainsim/errors.hpp"
#include "trainsim/report.hpp"
#include "trainsim/scenario.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim::cli {

namespace {

struct ValidateArgs {
  std::vector<std::string> paths;
  std::vector<std::string> overrides;  // --set, applied to every scenario
  bool json = false;
  bool markdown = false;
  std::string record;  // --record FILE
  std::string check;   // --check FILE
  double tolerance_points = 1.0;
  int threads = 0;  // 0: all cores
};

std::vector<std::string> scenario_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& p : paths) {
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file() && (e.path().extension() == ".yaml" || e.path().extension() == ".yml"))
          files.push_back(e.path().string());
    } else if (fs::exists(p)) {
      files.push_back(p);
    } else {
      throw Error("validate: no such file or directory: " + p);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The part of a case both a simulated and a failed row carry.
ValidationCase case_of(const Scenario& s) {
  ValidationCase c;
  c.name = s.name;
  c.group = validation_group(s.name);
  c.gpu = s.cluster.gpu.name;
  c.generation = s.cluster.gpu.architecture;
  c.confidence = s.reference->confidence;
  return c;
}

ValidationCase failed_case(ValidationCase c, const std::exception& e) {
  c.fields.clear();
  c.points.clear();
  const auto* internal = dynamic_cast<const InternalError*>(&e);
  c.error = internal ? internal_error_message(*internal) : e.what();  // a bug says so in its row
  if (c.error.empty()) c.error = "failed (no message)";
  return c;
}

ValidationCase validate_one(const Scenario& s) {
  ValidationCase c = case_of(s);
  const ReferenceSpec& ref = *s.reference;
  if (!s.has_training_job) {
    const auto points = run_collective_benchmark(s);
    c.op = to_string(s.collective->op);
    for (std::size_t i = 0; i < points.size(); ++i) {
      const auto& measured = s.collective->points[i];
      c.points.push_back({points[i].size, points[i].measured_busbw_GBps, points[i].simulated_busbw_GBps,
                          points[i].algorithm, points[i].protocol, measured.nccl_algo.value_or("")});
    }
    if (ref.busbw_GBps && !points.empty()) {
      // Compare at the largest stated size (the reference repeats that point's busbw).
      const auto best =
          std::max_element(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.size < b.size; });
      c.fields.push_back({"busbw_GBps", *ref.busbw_GBps, best->simulated_busbw_GBps});
    }
    return c;
  }
  RunOptions o;
  o.allow_oom = true;  // validation reports what the run would take; memory is judged separately
  o.threads = 1;       // the cases run on --threads threads, one simulation each
  const RunResult r = run_scenario(s, o).result;
  auto add = [&](const char* field, const std::optional<double>& measured, double simulated) {
    if (measured && *measured > 0) c.fields.push_back({field, *measured, simulated});
  };
  add("iteration_time_s", ref.iteration_time_s, r.iteration_time_s);
  // Sources that count the recompute forward in their TFLOP/s are compared against hardware FLOPs.
  const double tflops = ref.flops_convention == FlopsConvention::Hardware ? r.hfu * r.peak_tflops : r.tflops_per_gpu;
  add("tflops_per_gpu", ref.tflops_per_gpu, tflops);
  add("mfu", ref.mfu, r.mfu);
  add("hfu", ref.hfu, r.hfu);
  add("tokens_per_s_per_gpu", ref.tokens_per_s_per_gpu, r.tokens_per_s_per_gpu);
  if (r.memory && !r.memory->fits) {  // the run was measured, so it fit: the memory model is off here; say so
    c.memory_needed_gib = r.memory->peak;
    c.memory_capacity_gib = r.memory->capacity;
  }
  return c;
}

// One file: its row, a failed row if it cannot be loaded or simulated, nothing without `reference:`.
// Never throws.
std::optional<ValidationCase> validate_file(const std::string& file, const std::vector<std::string>& overrides) {
  try {
    Scenario s;
    try {
      s = load_scenario(file, overrides);
    } catch (const std::exception& e) {
      ValidationCase c;
      c.name = std::filesystem::path(file).stem().string();
      c.group = validation_group(c.name);
      return failed_case(std::move(c), e);
    }
    if (!s.reference) return std::nullopt;
    try {
      return validate_one(s);
    } catch (const std::exception& e) { return failed_case(case_of(s), e); }
  } catch (...) {
    ValidationCase c;
    c.name = std::filesystem::path(file).stem().string();
    c.group = validation_group(c.name);
    c.error = "failed (unknown exception)";
    return c;
  }
}

// Exit status of a table run: 1 when a case could not be loaded or simulated, saying which on
// stderr after the table (which has the reasons).
int report_failed_cases(const std::vector<ValidationCase>& cases) {
  std::vector<std::string> failed;
  for (const auto& c : cases)
    if (!c.error.empty()) failed.push_back(c.name);
  if (failed.empty()) return 0;
  constexpr std::size_t kNamed = 5;
  std::string names;
  for (std::size_t i = 0; i < std::min(failed.size(), kNamed); ++i) names += (i ? ", " : "") + failed[i];
  if (failed.size() > kNamed) names += ", ...";
  check_stdout();  // the table before the error line
  std::cerr << "error: " << failed.size() << " of " << cases.size()
            << " cases could not be loaded or simulated (reasons in the table): " << names << "\n";
  return 1;
}

}  // namespace

Command add_validate_command(CLI::App& app) {
  auto args = std::make_shared<ValidateArgs>();
  auto* cmd = app.add_subcommand("validate", "compare simulated results with the `reference:` block of scenarios");
  cmd->add_option("paths", args->paths, "scenario files or directories")->required();
  cmd->add_option("--set", args->overrides,
                  "override a key in every scenario, e.g. --set training.attention_kernel=triton (repeatable)");
  cmd->add_flag("--json", args->json, "print the table as JSON");
  cmd->add_flag("--markdown", args->markdown, "print the table as Markdown (docs/accuracy.md)");
  cmd->add_option("--record", args->record,
                  "also write the per-group summary and the failing cases to FILE (JSON; `make accuracy` "
                  "writes tests/accuracy/groups-recorded.json)");
  cmd->add_option("--check", args->check,
                  "instead of the table, compare the groups with FILE written by --record: exit 1 when a group's "
                  "median |error| rose by more than --tolerance points, a group is gone or a case newly fails");
  cmd->add_option("--tolerance", args->tolerance_points,
                  "points of median |error| a group may lose in --check (default 1)")
      ->check(CLI::Validator(
          [](std::string& text) {
            // CLI11's NonNegativeNumber would say "not in range 0 to 1.797...e308".
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            return !text.empty() && *end == '\0' && v >= 0 && std::isfinite(v)
                       ? std::string()
                       : "expected a non-negative number of points, got '" + text + "'";
          },
          "POINTS"));
  cmd->add_option("--threads", args->threads,
                  "cases simulated at a time (default 0: all cores); the output does not depend on it")
      ->check(thread_count_check());
  return {cmd, [args]() {
            // Read the record first: a missing or malformed one is an error before minutes of simulation.
            std::optional<AccuracyRecord> recorded;
            if (!args->check.empty()) {
              std::ifstream in(args->check);
              if (!in) throw Error("validate --check: cannot read " + args->check + " (write it with `make accuracy`)");
              nlohmann::json j;
              try {
                j = nlohmann::json::parse(in);
              } catch (const nlohmann::json::exception& e) {
                throw Error("validate --check: " + args->check + " is not JSON: " + e.what());
              }
              recorded = accuracy_record_from_json(j);
            }
            const std::vector<std::string> files = scenario_files(args->paths);
            std::vector<std::optional<ValidationCase>> slots(files.size());
            // Workers take the next unclaimed file and write only its slot; nothing escapes a worker
            // (an exception leaving a std::jthread terminates), so the rows come out in file order,
            // the same bytes whatever the thread count.
            std::atomic<std::size_t> next{0};
            auto worker = [&] {
              for (std::size_t i = next.fetch_add(1); i < files.size(); i = next.fetch_add(1))
                slots[i] = validate_file(files[i], args->overrides);
            };
            const unsigned hw = std::thread::hardware_concurrency();
            const std::size_t threads = std::min(
                files.size(), static_cast<std::size_t>(args->threads > 0 ? args->threads : (hw == 0 ? 1 : hw)));
            if (threads <= 1) {
              worker();
            } else {
              std::vector<std::jthread> pool;
              for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
            }
            std::vector<ValidationCase> cases;
            for (auto& slot : slots)
              if (slot) cases.push_back(std::move(*slot));
            if (!args->record.empty())
              write_output_file("--record", args->record, [&](std::ostream& out) {
                out << accuracy_record_to_json(make_accuracy_record(cases)).dump(2) << "\n";
              });
            if (recorded) {
              const AccuracyComparison cmp =
                  compare_accuracy(*recorded, make_accuracy_record(cases), args->tolerance_points);
              write_accuracy_comparison(std::cout, cmp);
              return cmp.passed() ? 0 : 1;
            }
            if (args->json)
              std::cout << validation_to_json(cases).dump(2) << "\n";
            else if (args->markdown)
              write_validation_markdown(std::cout, cases);
            else
              write_validation_table(std::cout, cases);
            return report_failed_cases(cases);
          }};
}

}  // namespace trainsim::cli
