// An FSDP job on Hopper or Blackwell left at training.attention_kernel: auto is priced with cuDNN's attention, which a
// plain PyTorch job's scaled_dot_product_attention does not pick before torch 2.9: the run's "chosen" lines say so
// when the key is left to auto, and only then.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "scenario/scenario_loader.hpp"
#include "support/tiny_scenario.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim {
namespace {

// How many times the run notes that auto priced cuDNN, for the tiny scenario (GPT-3 1.3B on one 8-GPU node) under
// `framework` on `gpu`, with `kernel` as training.attention_kernel (empty: not given).
long noted(const std::string& framework, const std::string& kernel, const std::string& gpu = "H100-SXM") {
  std::string yaml = test::kTinyScenario;
  yaml.replace(yaml.find("gpu: H100-SXM"), 13, "gpu: " + gpu);
  yaml.replace(yaml.find("parallelism:\n"), 13, "parallelism:\n  framework: " + framework + "\n");
  if (!kernel.empty()) yaml.replace(yaml.find("training:\n"), 10, "training:\n  attention_kernel: " + kernel + "\n");
  const RunResult r = run_scenario(parse_scenario(yaml, "tiny.yaml")).result;
  return std::count_if(r.inferred.begin(), r.inferred.end(), [](const InferredSetting& v) {
    return v.key == "training.attention_kernel" && v.value == "cudnn" &&
           v.why.find("FlashAttention-2") != std::string::npos && v.why.find("set flash2") != std::string::npos;
  });
}

TEST(InferredAttention, FsdpOnHopperOrBlackwellSaysAutoIsCudnn) {
  EXPECT_EQ(noted("fsdp", ""), 1);
  EXPECT_EQ(noted("fsdp", "", "B200"), 1);
  EXPECT_EQ(noted("fsdp", "flash2"), 0);  // given, whatever it is: nothing to say
  EXPECT_EQ(noted("fsdp", "cudnn"), 0);
  EXPECT_EQ(noted("fsdp", "", "A100-SXM-80GB"), 0);  // auto is FlashAttention-2 there
  EXPECT_EQ(noted("megatron", ""), 0);               // Transformer Engine's cuDNN attention
}

}  // namespace
}  // namespace trainsim
