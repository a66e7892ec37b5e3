// `parallelism.deepspeed:` DeepSpeed's ZeRO knobs under their own names and code defaults
// (DeepSpeed deepspeed/runtime/zero/config.py::DeepSpeedZeroConfig): reading, defaults, overlap_comm's
// stage-dependent default and its relation to parallelism.overlap_grad_reduce, and the errors for misuse.
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

// kValidScenario has pipeline 2; DeepSpeed ZeRO-2/3 need pipeline 1 (PipelineEngine's assertion).
std::string deepspeed(int zero_stage) {
  std::string yaml = edit(kValidScenario, "parallelism.framework", "deepspeed");
  yaml = edit(yaml, "parallelism.pipeline", "1");
  return edit(yaml, "parallelism.zero_stage", std::to_string(zero_stage).c_str());
}

TEST(DeepSpeedKeys, DefaultsAreDeepSpeeds) {
  const Scenario s = parse_scenario(deepspeed(3), "test.yaml");
  const DeepSpeedSpec& d = s.parallelism.deepspeed;
  EXPECT_DOUBLE_EQ(d.reduce_bucket_size, 5e8);
  EXPECT_DOUBLE_EQ(d.stage3_prefetch_bucket_size, 5e7);
  EXPECT_DOUBLE_EQ(d.stage3_max_live_parameters, 1e9);
  EXPECT_DOUBLE_EQ(d.stage3_max_reuse_distance, 1e9);
  EXPECT_DOUBLE_EQ(d.stage3_param_persistence_threshold, 1e5);
  // DeepSpeed's validator: overlap_comm true for stage 3, false for 1 and 2.
  ASSERT_TRUE(d.overlap_comm.has_value());
  EXPECT_TRUE(*d.overlap_comm);
  for (int z : {1, 2}) {
    const Scenario low = parse_scenario(deepspeed(z), "test.yaml");
    ASSERT_TRUE(low.parallelism.deepspeed.overlap_comm.has_value());
    EXPECT_FALSE(*low.parallelism.deepspeed.overlap_comm) << "zero_stage " << z;
  }
}

TEST(DeepSpeedKeys, ReadsEveryKey) {
  const std::string yaml =
      edit(deepspeed(3), "parallelism.deepspeed",
           "{reduce_bucket_size: 2e8, stage3_prefetch_bucket_size: 1e7, stage3_max_live_parameters: "
           "3e8, stage3_max_reuse_distance: 0, stage3_param_persistence_threshold: 1e6, "
           "overlap_comm: false}");
  const DeepSpeedSpec d = parse_scenario(yaml, "test.yaml").parallelism.deepspeed;
  EXPECT_DOUBLE_EQ(d.reduce_bucket_size, 2e8);
  EXPECT_DOUBLE_EQ(d.stage3_prefetch_bucket_size, 1e7);
  EXPECT_DOUBLE_EQ(d.stage3_max_live_parameters, 3e8);
  EXPECT_DOUBLE_EQ(d.stage3_max_reuse_distance, 0);  // 0 is DeepSpeed's "release after every use"
  EXPECT_DOUBLE_EQ(d.stage3_param_persistence_threshold, 1e6);
  EXPECT_FALSE(*d.overlap_comm);
}

TEST(DeepSpeedKeys, BlockNeedsFrameworkDeepSpeed) {
  const std::string megatron = edit(kValidScenario, "parallelism.deepspeed", "{reduce_bucket_size: 1e8}");
  EXPECT_SCENARIO_ERROR(megatron, "parallelism.deepspeed", "framework is megatron", "parallelism.framework: deepspeed");
  std::string fsdp = edit(megatron, "parallelism.framework", "fsdp");
  EXPECT_SCENARIO_ERROR(fsdp, "parallelism.deepspeed", "framework is fsdp");
}

TEST(DeepSpeedKeys, SizesMustBeValid) {
  EXPECT_SCENARIO_ERROR(edit(deepspeed(2), "parallelism.deepspeed.reduce_bucket_size", "0"),
                        "parallelism.deepspeed.reduce_bucket_size", "positive");
  EXPECT_SCENARIO_ERROR(edit(deepspeed(3), "parallelism.deepspeed.stage3_prefetch_bucket_size", "-1"),
                        "parallelism.deepspeed.stage3_prefetch_bucket_size");
  EXPECT_SCENARIO_ERROR(edit(deepspeed(3), "parallelism.deepspeed.stage3_max_live_parameters", "-5"),
                        "parallelism.deepspeed.stage3_max_live_parameters");
  EXPECT_SCENARIO_ERROR(edit(deepspeed(3), "parallelism.deepspeed.stage3_param_persistence_threshold", "abc"),
                        "parallelism.deepspeed.stage3_param_persistence_threshold");
  EXPECT_SCENARIO_ERROR(edit(deepspeed(3), "parallelism.deepspeed.overlap_comm", "maybe"),
                        "parallelism.deepspeed.overlap_comm");
  // A misspelt key names the closest one.
  EXPECT_SCENARIO_ERROR(edit(deepspeed(3), "parallelism.deepspeed.reduce_bucket", "1e8"),
                        "parallelism.deepspeed.reduce_bucket", "did you mean parallelism.deepspeed.reduce_bucket_size");
}

TEST(DeepSpeedKeys, OverlapGradReduceIsOverlapComm) {
  // Written alone, overlap_grad_reduce sets overlap_comm (here against the stage-3 default).
  const Scenario off = parse_scenario(edit(deepspeed(3), "parallelism.overlap_grad_reduce", "false"), "test.yaml");
  EXPECT_FALSE(*off.parallelism.deepspeed.overlap_comm);
  const Scenario on = parse_scenario(edit(deepspeed(1), "parallelism.overlap_grad_reduce", "true"), "test.yaml");
  EXPECT_TRUE(*on.parallelism.deepspeed.overlap_comm);
  // Both written and equal: fine; different: an error naming the key.
  std::string both = edit(deepspeed(2), "parallelism.overlap_grad_reduce", "true");
  EXPECT_TRUE(*parse_scenario(edit(both, "parallelism.deepspeed.overlap_comm", "true"), "test.yaml")
                   .parallelism.deepspeed.overlap_comm);
  EXPECT_SCENARIO_ERROR(edit(both, "parallelism.deepspeed.overlap_comm", "false"), "parallelism.deepspeed.overlap_comm",
                        "contradicts parallelism.overlap_grad_reduce true");
}

TEST(DeepSpeedKeys, GradBucketMbPointsToReduceBucketSize) {
  EXPECT_SCENARIO_ERROR(edit(deepspeed(2), "parallelism.grad_bucket_mb", "25"), "parallelism.grad_bucket_mb",
                        "parallelism.deepspeed.reduce_bucket_size");
  // Megatron keeps it.
  EXPECT_NO_THROW(parse_scenario(edit(kValidScenario, "parallelism.grad_bucket_mb", "25"), "test.yaml"));
}

TEST(DeepSpeedKeys, SetOverridesReachTheBlock) {
  const Scenario s = parse_scenario(deepspeed(3), "test.yaml", {"parallelism.deepspeed.stage3_max_reuse_distance=0"});
  EXPECT_DOUBLE_EQ(s.parallelism.deepspeed.stage3_max_reuse_distance, 0);
}

}  // namespace
}  // namespace trainsim
