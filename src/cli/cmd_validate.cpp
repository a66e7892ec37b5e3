// `trainsim validate PATH...`: run every scenario with a `reference:` block and compare.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "report/validation_report.hpp"
#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim::cli {

namespace {

struct ValidateArgs {
  std::vector<std::string> paths;
  std::vector<std::string> overrides;  // --set, applied to every scenario
  bool json = false;
  bool markdown = false;
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

std::string group_of(const std::string& name) { return name.substr(0, name.find('-')); }

ValidationCase validate_one(const Scenario& s) {
  ValidationCase c;
  c.name = s.name;
  c.group = group_of(s.name);
  c.gpu = s.cluster.gpu.name;
  c.confidence = s.reference->confidence;
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
      const auto best = std::max_element(points.begin(), points.end(),
                                         [](const auto& a, const auto& b) { return a.size < b.size; });
      c.fields.push_back({"busbw_GBps", *ref.busbw_GBps, best->simulated_busbw_GBps});
    }
    return c;
  }
  RunOptions o;
  o.allow_oom = true;  // validation reports what the run would take; memory is judged separately
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
  return c;
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
  return {cmd, [args]() {
            std::vector<ValidationCase> cases;
            for (const auto& f : scenario_files(args->paths)) {
              Scenario s;
              try {
                s = load_scenario(f, args->overrides);
              } catch (const Error& e) {
                ValidationCase c;
                c.name = std::filesystem::path(f).stem().string();
                c.group = group_of(c.name);
                c.error = e.what();
                cases.push_back(std::move(c));
                continue;
              }
              if (!s.reference) continue;
              try {
                cases.push_back(validate_one(s));
              } catch (const Error& e) {
                ValidationCase c;
                c.name = s.name;
                c.group = group_of(s.name);
                c.gpu = s.cluster.gpu.name;
                c.confidence = s.reference->confidence;
                c.error = e.what();
                cases.push_back(std::move(c));
              }
            }
            if (args->json)
              std::cout << validation_to_json(cases).dump(2) << "\n";
            else if (args->markdown)
              write_validation_markdown(std::cout, cases);
            else
              write_validation_table(std::cout, cases);
            return 0;
          }};
}

}  // namespace trainsim::cli
