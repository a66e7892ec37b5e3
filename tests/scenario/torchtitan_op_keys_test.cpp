// training.recompute_modules: [torchtitan_op] — torchtitan's per-op selective activation checkpointing — is accepted
// for a PyTorch (fsdp) job with dense SDPA blocks, and refused, naming the key, everywhere else.
#include <algorithm>

#include "scenario_test_support.hpp"
#include "support/torchtitan_job.hpp"

namespace trainsim {
namespace {

using test::edit;

const std::string kTorchtitanJob = test::torchtitan_job_yaml();

TEST(TorchtitanOp, AcceptedForAPyTorchJob) {
  const Scenario s = parse_scenario(kTorchtitanJob, "test.yaml");
  EXPECT_TRUE(s.training.recompute_modules.torchtitan_op);
  EXPECT_FALSE(s.training.recompute_modules.core_attn) << "attention is saved, not recomputed";
}

TEST(TorchtitanOp, RefusedWhereItDoesNotApply) {
  const std::string key = "training.recompute_modules";
  EXPECT_SCENARIO_ERROR(edit(kTorchtitanJob, "parallelism.framework", "megatron"), key, "torchtitan_op",
                        "parallelism.framework: fsdp");
  EXPECT_SCENARIO_ERROR(edit(kTorchtitanJob, "parallelism.framework", "deepspeed"), key, "torchtitan_op",
                        "parallelism.framework: fsdp");
  EXPECT_SCENARIO_ERROR(edit(kTorchtitanJob, key, "[torchtitan_op, core_attn]"), key, "cannot be combined");
  EXPECT_SCENARIO_ERROR(edit(kTorchtitanJob, "parallelism.sequence_parallel", "false"), key,
                        "parallelism.sequence_parallel: true");
  EXPECT_SCENARIO_ERROR(edit(kTorchtitanJob, "training.flash_attention", "false"), key,
                        "training.flash_attention: true");
  EXPECT_SCENARIO_ERROR(edit(kTorchtitanJob, "training.recompute", "full"), key,
                        "only applies with training.recompute: selective");
  std::string mla = edit(kTorchtitanJob, "model.mla.kv_lora_rank", "256");
  mla = edit(mla, "model.mla.qk_nope_head_dim", "64");
  mla = edit(mla, "model.mla.qk_rope_head_dim", "32");
  mla = edit(mla, "model.mla.v_head_dim", "64");
  mla = edit(mla, "model.num_query_groups", nullptr);  // MLA sizes its own heads: the GQA key is refused with it
  EXPECT_SCENARIO_ERROR(mla, key, "multi-latent attention");
}

TEST(TorchtitanOp, MegatronModulesStayMegatronOnly) {
  EXPECT_SCENARIO_ERROR(edit(kTorchtitanJob, "training.recompute_modules", "[mlp]"), "training.recompute_modules",
                        "Megatron-LM's");
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(TorchtitanOp, AnFsdpJobsPlainSelectiveSaysWhatItPrices) {
  const Scenario plain = parse_scenario(test::edit(kTorchtitanJob, "training.recompute_modules", nullptr), "test.yaml");
  const auto it = std::find_if(plain.inferred.begin(), plain.inferred.end(),
                               [](const InferredValue& v) { return v.key == "training.recompute_modules"; });
  ASSERT_NE(it, plain.inferred.end());
  EXPECT_EQ(it->value, "[core_attn]");
  EXPECT_NE(it->why.find("[torchtitan_op]"), std::string::npos);
  const Scenario named = parse_scenario(kTorchtitanJob, "test.yaml");
  EXPECT_TRUE(std::none_of(named.inferred.begin(), named.inferred.end(),
                           [](const InferredValue& v) { return v.key == "training.recompute_modules"; }));
}

}  // namespace
}  // namespace trainsim
