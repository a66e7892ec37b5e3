// `trainsim presets [--json]`: the built-in models and GPUs, the collective algorithms and the training frameworks.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "trainsim/catalogs.hpp"
#include "trainsim/scenario.hpp"

namespace trainsim::cli {

namespace {

void write_text(std::ostream& out) {
  out << "Models (model.preset):\n";
  for (const auto& p : ModelCatalog::builtin().presets()) out << fmt::format("  {:<16} {}\n", p.name, p.description);
  out << "\nGPUs (cluster.gpu):\n";
  out << fmt::format("  {:<16} {:>10} {:>10} {:>10} {:>10} {:>9} {:>10} {:>11} {:>7}\n", "id", "bf16 TF", "fp8 TF",
                     "fp4 TF", "HBM GB/s", "mem GiB", "scale-up", "clock MHz", "power W");
  auto tf = [](const std::optional<double>& v) { return v ? fmt::format("{:.0f}", *v) : std::string("-"); };
  auto num = [](double v) { return v > 0 ? fmt::format("{:.0f}", v) : std::string("-"); };
  for (const auto& g : GpuCatalog::builtin().gpus()) {
    // clock: the peaks' basis / the clock held under long dense load ("-" where the catalog has none).
    const std::string clock =
        g.peak_clock_mhz > 0 ? fmt::format("{:.0f}/{:.0f}", g.peak_clock_mhz, g.sustained_clock_mhz) : std::string("-");
    out << fmt::format("  {:<16} {:>10} {:>10} {:>10} {:>10.0f} {:>9.1f} {:>10.0f} {:>11} {:>7}\n", g.name,
                       tf(g.bf16_tflops ? g.bf16_tflops : g.fp16_tflops), tf(g.fp8_tflops), tf(g.fp4_tflops),
                       g.hbm_GBps, g.memory_gib, g.scale_up_GBps, clock, num(g.power_w));
  }
  out << "  (clock MHz: the dense peaks' clock / the clock held under long dense load at the rated power)\n";
  out << "\nCollective algorithms (algorithms.all_reduce, .all_gather, .reduce_scatter):\n";
  for (const auto& a : collective_algorithms())
    out << fmt::format("  {:<16} {} [{}]\n", a.name, a.description, a.collectives);
  out << "\nTraining frameworks (parallelism.framework):\n";
  for (const auto& f : frameworks()) out << fmt::format("  {:<16} {}\n", f.name, f.description);
}

// Everything the catalogs say, unrounded; null where the catalog does not say (the table's "-").
nlohmann::ordered_json presets_json() {
  auto optional = [](const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
  };
  auto known = [](double v) { return v > 0 ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); };
  nlohmann::ordered_json j;
  j["models"] = nlohmann::ordered_json::array();
  for (const auto& p : ModelCatalog::builtin().presets())
    j["models"].push_back({{"name", p.name}, {"description", p.description}});
  j["gpus"] = nlohmann::ordered_json::array();
  for (const auto& g : GpuCatalog::builtin().gpus())
    j["gpus"].push_back(
        {{"name", g.name},
         {"vendor", g.vendor},
         {"architecture", g.architecture},
         {"sm_version", g.sm_version > 0 ? nlohmann::ordered_json(g.sm_version) : nlohmann::ordered_json()},
         {"peak_tflops",
          {{"fp32", optional(g.fp32_tflops)},
           {"tf32", optional(g.tf32_tflops)},
           {"bf16", optional(g.bf16_tflops)},
           {"fp16", optional(g.fp16_tflops)},
           {"fp8", optional(g.fp8_tflops)},
           {"fp4", optional(g.fp4_tflops)}}},
         {"hbm_GBps", g.hbm_GBps},
         {"memory_gib", g.memory_gib},
         {"scale_up_GBps", g.scale_up_GBps},
         {"scale_up_domain",
          g.scale_up_domain > 0 ? nlohmann::ordered_json(g.scale_up_domain) : nlohmann::ordered_json()},
         {"sm_count", g.sm_count > 0 ? nlohmann::ordered_json(g.sm_count) : nlohmann::ordered_json()},
         {"peak_clock_mhz", known(g.peak_clock_mhz)},
         {"sustained_clock_mhz", known(g.sustained_clock_mhz)},
         {"boost_clock_mhz", known(g.boost_clock_mhz)},
         {"power_w", known(g.power_w)}});
  j["algorithms"] = nlohmann::ordered_json::array();
  for (const auto& a : collective_algorithms())
    j["algorithms"].push_back({{"name", a.name}, {"description", a.description}, {"collectives", a.collectives}});
  j["frameworks"] = nlohmann::ordered_json::array();
  for (const auto& f : frameworks()) j["frameworks"].push_back({{"name", f.name}, {"description", f.description}});
  return j;
}

}  // namespace

Command add_presets_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* cmd =
      app.add_subcommand("presets", "list built-in model presets, GPUs, collective algorithms and training frameworks");
  cmd->add_flag(
      "--json", *json,
      "print them as one JSON object: models, gpus (fields as in cluster.gpu_spec), algorithms and frameworks");
  return {cmd, [json]() {
            if (*json)
              std::cout << presets_json().dump(2) << "\n";
            else
              write_text(std::cout);
            return 0;
          }};
}

}  // namespace trainsim::cli
