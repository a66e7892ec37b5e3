// The header of `trainsim run` and `trainsim memory`: what was trained (sequence length, global batch) and
// the warnings validation raised, as a user reads them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace trainsim_cli_test;

// examples/tiny-8-h100.yaml: gpt3-1.3b (2048 tokens) with a global batch of 32 sequences.
TEST(RunHeaderCli, RunAndMemoryShowSequenceLengthAndGlobalBatch) {
  const Result r = run("run " + example("tiny-8-h100.yaml"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("sequence length 2048   global batch size 32"), std::string::npos) << r.out;
  const Result m = run("memory " + example("tiny-8-h100.yaml"));
  ASSERT_EQ(m.status, 0) << m.out;
  EXPECT_NE(m.out.find("sequence length 2048   global batch size 32"), std::string::npos) << m.out;
  const Result longer = run("memory " + example("tiny-8-h100.yaml") + " --set model.seq_length=4096");
  EXPECT_NE(longer.out.find("sequence length 4096"), std::string::npos) << longer.out;
}

// Tensor 16 on nodes of 8 GPUs: the run goes ahead and says, in the text header and in simulation.warnings, that
// the tensor group is wider than the scale-up domain.
TEST(RunHeaderCli, RunWarnsWhenTensorExceedsTheScaleUpDomain) {
  const std::string args = "run " + example("tiny-8-h100.yaml") +
                           " --set cluster.num_gpus=16 --set parallelism.tensor=16 --set training.micro_batch_size=1";
  const Result r = run(args);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("warning: parallelism.tensor: tensor 16 is larger than the scale-up domain"), std::string::npos)
      << r.out;
  const Result j = run(args + " --json");
  ASSERT_EQ(j.status, 0) << j.out;
  const auto w = nlohmann::json::parse(j.out)["simulation"]["warnings"];
  ASSERT_EQ(w.size(), 1u) << j.out;
  EXPECT_EQ(w[0]["key"], "parallelism.tensor");

  const Result fits = run("run " + example("tiny-8-h100.yaml") + " --json");
  ASSERT_EQ(fits.status, 0) << fits.out;
  EXPECT_TRUE(nlohmann::json::parse(fits.out)["simulation"]["warnings"].empty());
}
