// `trainsim presets`: the built-in models and GPUs.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "hardware/gpu_catalog.hpp"
#include "model/model_catalog.hpp"

namespace trainsim::cli {

Command add_presets_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("presets", "list built-in model presets and GPUs");
  return {cmd, []() {
    std::cout << "Models (model.preset):\n";
    for (const auto& p : ModelCatalog::builtin().presets()) std::cout << fmt::format("  {:<16} {}\n", p.name, p.description);
    std::cout << "\nGPUs (cluster.gpu):\n";
    std::cout << fmt::format("  {:<16} {:>10} {:>10} {:>10} {:>10} {:>9} {:>10} {:>11} {:>7}\n", "id", "bf16 TF",
                             "fp8 TF", "fp4 TF", "HBM GB/s", "mem GiB", "scale-up", "clock MHz", "power W");
    auto tf = [](const std::optional<double>& v) { return v ? fmt::format("{:.0f}", *v) : std::string("-"); };
    auto num = [](double v) { return v > 0 ? fmt::format("{:.0f}", v) : std::string("-"); };
    for (const auto& g : GpuCatalog::builtin().gpus()) {
      // clock: the peaks' basis / the clock held under long dense load ("-" where the catalog has none).
      const std::string clock = g.peak_clock_mhz > 0 ? fmt::format("{:.0f}/{:.0f}", g.peak_clock_mhz, g.sustained_clock_mhz)
                                                     : std::string("-");
      std::cout << fmt::format("  {:<16} {:>10} {:>10} {:>10} {:>10.0f} {:>9.1f} {:>10.0f} {:>11} {:>7}\n", g.name,
                               tf(g.bf16_tflops ? g.bf16_tflops : g.fp16_tflops), tf(g.fp8_tflops), tf(g.fp4_tflops),
                               g.hbm_GBps, g.memory_gib, g.scale_up_GBps, clock, num(g.power_w));
    }
    std::cout << "  (clock MHz: the dense peaks' clock / the clock held under long dense load at the rated power)\n";
    return 0;
  }};
}

}  // namespace trainsim::cli
