// A whole transformer layer against the same layer timed on a real H200 (data/measured/H200-2026-11-27,
// characterise-layer-sizes.json, written by tools/profile/gpu_characterise.py's `layer` part): a Llama-style
// layer in plain PyTorch (RMSNorm written out in PyTorch ops, fused QKV, SDPA's FlashAttention-2, SwiGLU as
// silu * up, no RoPE), forward + backward, bf16. Its burst time (one step after a second of idle, so near the
// 1980 MHz boost) is compared with the sum of the roofline's short-run times of the kernels trainsim emits for
// one layer of the same shape: the eager kernel list (training.fusion: eager) must land within 6% at all
// three sizes, and the fused list (Megatron / Transformer Engine) must be clearly faster than the eager
// measurement where the memory-bound share is largest, so the comparison can tell the two apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compute/arch_family.hpp"
#include "compute/roofline_model.hpp"
#include "hardware/gpu_catalog.hpp"
#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"
#include "workload/kernels_factory.hpp"

using namespace trainsim;

namespace {

const std::string kMeasured =
    std::string(TRAINSIM_SOURCE_DIR) + "/data/measured/H200-2026-11-27/characterise-layer-sizes.json";

struct LayerShape {
  int h, heads, ffn, seq, mb;
};

// The measured burst time of the layer: the median of five steps, each after a second of idle.
double measured_burst_ms(const LayerShape& s) {
  std::ifstream in(kMeasured);
  const auto j = nlohmann::json::parse(in);
  const std::string key = fmt::format("layerb-{}x{}x{}x{}x{}", s.h, s.heads, s.ffn, s.seq, s.mb);
  return j.at(key).at("layer").at("burst_median_ms").get<double>();
}

std::string layer_scenario(const LayerShape& s, const char* fusion) {
  return fmt::format(R"(
model: {{family: llama, num_layers: 3, hidden_size: {}, num_attention_heads: {}, num_query_groups: {},
        ffn_hidden_size: {}, gated_mlp: true, vocab_size: 32000, seq_length: {}, position_embedding: learned}}
training: {{global_batch_size: {}, micro_batch_size: {}, precision: bf16, recompute: none,
           flash_attention: true, attention_kernel: flash2, fusion: {}}}
parallelism: {{tensor: 1, pipeline: 1, data: 1}}
cluster: {{gpu: H200, num_gpus: 1, gpus_per_node: 1}}
)",
                     s.h, s.heads, s.heads, s.ffn, s.seq, s.mb, s.mb, fusion);
}

// Short-run (boost clock) time of the kernels of the middle layer, forward + backward, in ms. The measured
// step also accumulated each weight gradient into the .grad of the step before (PyTorch's AccumulateGrad: read
// both, write one, bf16): one more elementwise pass over the layer's weights, added here.
double simulated_layer_ms(const LayerShape& s, const char* fusion) {
  const Scenario sc = parse_scenario(layer_scenario(s, fusion), "layer.yaml");
  const Workload wl = generate_workload(sc);
  const GpuSpec& gpu = *GpuCatalog::builtin().find("H200");
  const auto short_run_s = [&](const KernelDesc& k) {
    const RooflineBreakdown b = roofline_breakdown(gpu, classify_arch(gpu), k, AttentionKernel::Flash2);
    return b.overhead_s + std::max(b.compute_s * b.clock_factor, b.memory_s);
  };
  double total = 0;
  for (const Op& op : wl.ranks.front().ops) {
    if (op.type == Op::Type::Compute && op.layer == 1) total += short_run_s(wl.kernels[op.desc]);
  }
  const double weights = static_cast<double>(s.h) * (4.0 * s.h + 3.0 * s.ffn);
  total += short_run_s(memory_kernel(KernelKind::Elementwise, weights * 6.0, weights, Precision::BF16));
  return total * 1e3;
}

const LayerShape kShapes[] = {{2048, 16, 5632, 2048, 8}, {4096, 32, 11008, 4096, 2}, {8192, 64, 28672, 4096, 1}};

}  // namespace

TEST(MeasuredH200Layer, EagerKernelListMatchesTheMeasuredLayerAtEverySize) {
  for (const LayerShape& s : kShapes) {
    const double measured = measured_burst_ms(s);
    const double eager = simulated_layer_ms(s, "eager");
    std::printf("layer h=%d: measured %.2f ms, eager kernels %.2f ms (measured / simulated %.3f)\n", s.h, measured,
                eager, measured / eager);
    EXPECT_NEAR(measured / eager, 1.0, 0.06) << "h=" << s.h;
  }
}

TEST(MeasuredH200Layer, FusedKernelListIsTooFastForTheEagerLayer) {
  // h = 2048: the memory-bound work is the largest share; fused kernels leave out about a fifth of the time.
  const LayerShape& s = kShapes[0];
  const double measured = measured_burst_ms(s);
  const double fused = simulated_layer_ms(s, "fused");
  const double eager = simulated_layer_ms(s, "eager");
  EXPECT_GT(measured / fused, 1.15);
  EXPECT_GT(eager, fused * 1.12);
}
