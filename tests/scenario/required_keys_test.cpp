// Missing required keys and sections are errors naming the key.
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

TEST(RequiredKeys, NoNumGpus) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.num_gpus", nullptr), "cluster.num_gpus",
                        "missing required key cluster.num_gpus");
}

TEST(RequiredKeys, NoGpu) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.gpu", nullptr), "cluster.gpu", "missing required key cluster.gpu",
                        "gpu_spec");
}

TEST(RequiredKeys, NoCluster) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster", nullptr), "cluster", "missing required section cluster");
}

TEST(RequiredKeys, NoModelButTraining) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "model", nullptr), "model", "missing required section model");
}

TEST(RequiredKeys, NeitherModelNorCollective) {
  EXPECT_SCENARIO_ERROR("cluster: {gpu: H100-SXM, num_gpus: 8}\n", "model", "missing required section model",
                        "collective");
}

TEST(RequiredKeys, EmptyFile) {
  const auto e = test::parse_error("");
  ASSERT_TRUE(e.thrown);
  EXPECT_NE(e.what.find("empty scenario"), std::string::npos) << e.what;
}

TEST(RequiredKeys, NoTraining) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "training", nullptr), "training", "missing required section training");
}

TEST(RequiredKeys, ModelShape) {
  for (const char* key : {"model.num_layers", "model.hidden_size", "model.num_attention_heads", "model.seq_length"}) {
    SCOPED_TRACE(key);
    EXPECT_SCENARIO_ERROR(edit(kValidScenario, key, nullptr), key, std::string("missing required key ") + key);
  }
}

TEST(RequiredKeys, GlobalBatch) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "training.global_batch_size", nullptr), "training.global_batch_size",
                        "missing required key training.global_batch_size");
}

TEST(RequiredKeys, NullCountsAsMissing) {
  // `key: null` is how the spec writes "not given"; for a required key that is still missing.
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.num_gpus", "null"), "cluster.num_gpus", "missing required key");
}

TEST(RequiredKeys, CollectiveNeedsOp) {
  EXPECT_SCENARIO_ERROR("cluster: {gpu: H100-SXM, num_gpus: 8}\ncollective: {tool: nccl-tests}\n", "collective.op",
                        "missing required key collective.op");
}

}  // namespace
}  // namespace trainsim
