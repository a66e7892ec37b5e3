// Cross-block checks: configurations Megatron would refuse to start are errors naming the key.
#include <algorithm>

#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

TEST(JobValidation, DataMustMatchTheWorld) {
  // The spec's example message: 8 x 8 x 1 x 8 = 512 GPUs, not 1024.
  std::string yaml = edit(kValidScenario, "cluster.num_gpus", "1024");
  yaml = edit(yaml, "parallelism", "{tensor: 8, pipeline: 8, data: 8}");
  yaml = edit(yaml, "training.global_batch_size", "1024");
  EXPECT_SCENARIO_ERROR(yaml, "parallelism.data",
                        "num_gpus 1024 is not tensor 8 x pipeline 8 x context 1 x data 8 = 512");
  // data 16 makes it 1024.
  EXPECT_EQ(parse_scenario(edit(yaml, "parallelism.data", "16"), "test.yaml").parallelism.data, 16);
}

TEST(JobValidation, WorldNotDivisibleByModelParallel) {
  // 16 GPUs cannot be split in tensor 2 x pipeline 2 x context 3 = 12.
  std::string yaml = edit(kValidScenario, "parallelism.context", "3");
  yaml = edit(yaml, "model.seq_length", "2400");
  EXPECT_SCENARIO_ERROR(yaml, "cluster.num_gpus", "num_gpus 16 is not divisible by", "= 12");
}

TEST(JobValidation, HeadsDivisibleByTensor) {
  std::string yaml = edit(kValidScenario, "model.num_attention_heads", "12");  // 2048 / 12 is not whole
  yaml = edit(yaml, "model.kv_channels", "128");
  yaml = edit(yaml, "parallelism.tensor", "8");
  yaml = edit(yaml, "parallelism.pipeline", "1");
  yaml = edit(yaml, "cluster.num_gpus", "16");
  EXPECT_SCENARIO_ERROR(yaml, "parallelism.tensor",
                        "model.num_attention_heads 12 is not divisible by parallelism.tensor 8");
}

TEST(JobValidation, QueryGroupsDivisibleByTensor) {
  std::string yaml = edit(kValidScenario, "model.num_query_groups", "2");
  yaml = edit(yaml, "parallelism.tensor", "4");
  yaml = edit(yaml, "parallelism.pipeline", "1");
  EXPECT_SCENARIO_ERROR(yaml, "parallelism.tensor",
                        "model.num_query_groups 2 is not divisible by parallelism.tensor 4");
}

TEST(JobValidation, GlobalBatchDivisible) {
  // micro 2 x data 4 = 8 does not divide 60.
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "training.global_batch_size", "60"), "training.global_batch_size",
                        "global_batch_size 60 is not divisible by micro_batch_size 2 x data 4 = 8");
}

TEST(JobValidation, ContextDividesSequence) {
  // context 2 on 16 GPUs: tensor 2 x pipeline 2 x context 2 x data 2. Zig-zag needs seq % 4 == 0.
  std::string yaml = edit(kValidScenario, "parallelism.context", "2");
  yaml = edit(yaml, "training.global_batch_size", "64");
  EXPECT_NO_THROW(parse_scenario(yaml, "test.yaml"));
  EXPECT_SCENARIO_ERROR(edit(yaml, "model.seq_length", "2050"), "parallelism.context",
                        "model.seq_length 2050 is not divisible by 2 x context 2");
  // Ring attention lives in the fused attention kernel: unfused attention has no context-parallel path.
  EXPECT_SCENARIO_ERROR(edit(yaml, "training.flash_attention", "false"), "parallelism.context",
                        "needs training.flash_attention: true");
}

TEST(JobValidation, AttentionKernel) {
  const std::string fa1 = edit(kValidScenario, "training.attention_kernel", "flash1");
  EXPECT_EQ(parse_scenario(fa1, "test.yaml").training.attention_kernel, AttentionKernel::Flash1);
  EXPECT_EQ(parse_scenario(kValidScenario, "test.yaml").training.attention_kernel, AttentionKernel::Auto);
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "training.attention_kernel", "flash5"), "training.attention_kernel",
                        "flash2");
  // A fused kernel with unfused attention is a contradiction, not a silent choice.
  EXPECT_SCENARIO_ERROR(edit(fa1, "training.flash_attention", "false"), "training.attention_kernel",
                        "needs training.flash_attention: true");
}

// parallelism.zero_stage left out of an FSDP job: the default (1) is NO_SHARD there, not PyTorch's FULL_SHARD, and
// the report says so; written, or on another framework, nothing is noted.
TEST(JobValidation, FsdpWithoutZeroStageSaysItRunsNoShard) {
  std::string fsdp = edit(edit(kValidScenario, "parallelism.framework", "fsdp"), "parallelism.zero_stage", nullptr);
  fsdp = edit(edit(fsdp, "parallelism.tensor", "1"), "parallelism.pipeline", "1");
  const auto noted = [](const Scenario& s) {
    return std::count_if(s.inferred.begin(), s.inferred.end(), [](const InferredValue& v) {
      return v.key == "parallelism.zero_stage" && v.value == "1" && v.why.find("NO_SHARD") != std::string::npos;
    });
  };
  const Scenario unstated = parse_scenario(fsdp, "test.yaml");
  EXPECT_EQ(unstated.parallelism.zero_stage, 1);
  EXPECT_EQ(noted(unstated), 1);
  EXPECT_EQ(noted(parse_scenario(edit(fsdp, "parallelism.zero_stage", "1"), "test.yaml")), 0);
  EXPECT_EQ(noted(parse_scenario(edit(fsdp, "parallelism.zero_stage", "3"), "test.yaml")), 0);
  EXPECT_EQ(noted(parse_scenario(edit(kValidScenario, "parallelism.zero_stage", nullptr), "test.yaml")), 0);
}

// training.fusion: auto resolves by framework (fsdp: a plain PyTorch model, eager; megatron and deepspeed: fused
// kernels); an explicit value wins; anything else is an error naming the key and the accepted values.
TEST(JobValidation, Fusion) {
  EXPECT_EQ(parse_scenario(kValidScenario, "test.yaml").training.fusion, Fusion::Auto);
  EXPECT_FALSE(eager_pytorch(parse_scenario(kValidScenario, "test.yaml")));
  std::string fsdp = edit(edit(kValidScenario, "parallelism.framework", "fsdp"), "parallelism.zero_stage", "3");
  fsdp = edit(edit(fsdp, "parallelism.tensor", "1"), "parallelism.pipeline", "1");
  EXPECT_TRUE(eager_pytorch(parse_scenario(fsdp, "test.yaml")));
  // The report says when auto chose eager kernels, and only then.
  const auto noted = [](const Scenario& s) {
    return std::count_if(s.inferred.begin(), s.inferred.end(),
                         [](const InferredValue& v) { return v.key == "training.fusion" && v.value == "eager"; });
  };
  EXPECT_EQ(noted(parse_scenario(fsdp, "test.yaml")), 1);
  EXPECT_EQ(noted(parse_scenario(kValidScenario, "test.yaml")), 0);
  EXPECT_EQ(noted(parse_scenario(edit(fsdp, "training.fusion", "eager"), "test.yaml")), 0);
  EXPECT_FALSE(eager_pytorch(parse_scenario(edit(fsdp, "training.fusion", "fused"), "test.yaml")));
  const Scenario eager = parse_scenario(edit(kValidScenario, "training.fusion", "eager"), "test.yaml");
  EXPECT_EQ(eager.training.fusion, Fusion::Eager);
  EXPECT_TRUE(eager_pytorch(eager));
  EXPECT_STREQ(to_string(Fusion::Eager), "eager");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "training.fusion", "compiled"), "training.fusion", "fused");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "training.fusion", "true"), "training.fusion", "eager");
}

TEST(JobValidation, SequenceParallelNeedsSequenceDivisibleByTensor) {
  // 2049 tokens cannot be split over 2 tensor ranks; without sequence parallelism it is fine.
  const std::string yaml = edit(kValidScenario, "model.seq_length", "2049");
  EXPECT_SCENARIO_ERROR(yaml, "parallelism.sequence_parallel", "does not divide");
  EXPECT_NO_THROW(parse_scenario(edit(yaml, "parallelism.sequence_parallel", "false"), "test.yaml"));
}

TEST(JobValidation, ExpertParallel) {
  std::string moe = edit(kValidScenario, "model.moe", "{num_experts: 8}");
  moe = edit(moe, "parallelism.expert", "4");
  const Scenario s = parse_scenario(moe, "test.yaml");  // data 4 x context 1 holds 4 expert ranks
  EXPECT_EQ(s.parallelism.expert, 4);
  EXPECT_SCENARIO_ERROR(edit(moe, "model.moe.num_experts", "6"), "parallelism.expert",
                        "model.moe.num_experts 6 is not divisible by expert 4");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "parallelism.expert", "2"), "parallelism.expert", "needs an MoE model");
  // 8 expert ranks over data 4: not with Megatron's default expert_tensor = tensor 2 ...
  std::string big = edit(moe, "parallelism.expert", "8");
  EXPECT_SCENARIO_ERROR(edit(big, "parallelism.expert_tensor", "2"), "parallelism.expert",
                        "expert 8 does not divide data 4 x context 1 = 4");
  // ... but when expert_tensor is not given, the groups fold over tensor x data = 8 with expert_tensor 1, and the
  // choice is recorded for the report.
  const Scenario folded = parse_scenario(big, "test.yaml");
  EXPECT_EQ(folded.parallelism.expert_tensor, 1);
  ASSERT_EQ(folded.inferred.size(), 1u);
  EXPECT_EQ(folded.inferred[0].key, "parallelism.expert_tensor");
  EXPECT_EQ(folded.inferred[0].value, "1");
  EXPECT_NE(folded.inferred[0].why.find("data x context = 4"), std::string::npos) << folded.inferred[0].why;
  EXPECT_TRUE(s.inferred.empty());  // the default fitted: nothing chosen
  // 16 expert ranks fit neither way (16 does not divide the stage's 8 ranks): rejected with the numbers.
  EXPECT_SCENARIO_ERROR(edit(edit(big, "model.moe", "{num_experts: 16}"), "parallelism.expert", "16"),
                        "parallelism.expert", "expert 16 does not divide data 4 x context 1 = 4");
}

TEST(JobValidation, TpCommOverlapNeedsSequenceParallel) {
  std::string yaml = edit(kValidScenario, "parallelism.tp_comm_overlap", "true");
  EXPECT_NO_THROW(parse_scenario(yaml, "test.yaml"));
  EXPECT_SCENARIO_ERROR(edit(yaml, "parallelism.sequence_parallel", "false"), "parallelism.tp_comm_overlap",
                        "needs parallelism.sequence_parallel: true");
}

TEST(JobValidation, AsyncTpOfAPyTorchJobNeedsACompiledModel) {
  std::string yaml = edit(kValidScenario, "parallelism.tp_comm_overlap", "true");
  yaml = edit(yaml, "parallelism.framework", "fsdp");
  yaml = edit(yaml, "parallelism.pipeline", "1");
  EXPECT_SCENARIO_ERROR(yaml, "parallelism.tp_comm_overlap", "torch.compile", "training.fusion: fused");
  EXPECT_SCENARIO_ERROR(edit(yaml, "training.fusion", "eager"), "parallelism.tp_comm_overlap", "torch.compile");
  EXPECT_NO_THROW(parse_scenario(edit(yaml, "training.fusion", "fused"), "test.yaml"));
  // Megatron's is Transformer Engine's userbuffers, eager or not.
  EXPECT_NO_THROW(
      parse_scenario(edit(edit(yaml, "parallelism.framework", "megatron"), "training.fusion", "eager"), "test.yaml"));
}

TEST(JobValidation, SequenceParallelWithoutTensorHasNoEffect) {
  // Megatron disables sequence parallelism when tensor parallelism is off; so does trainsim.
  std::string yaml = edit(kValidScenario, "parallelism.tensor", "1");
  yaml = edit(yaml, "parallelism.sequence_parallel", "true");
  yaml = edit(yaml, "parallelism.tp_comm_overlap", "true");
  const Scenario s = parse_scenario(yaml, "test.yaml");
  EXPECT_FALSE(s.parallelism.sequence_parallel);
  EXPECT_FALSE(s.parallelism.tp_comm_overlap);
}

TEST(JobValidation, ZeroStage3WithPipelineRejectedForShardingFrameworks) {
  const std::string yaml = edit(kValidScenario, "parallelism.zero_stage", "3");
  EXPECT_NO_THROW(parse_scenario(yaml, "test.yaml"));  // megatron: allowed
  EXPECT_SCENARIO_ERROR(edit(yaml, "parallelism.framework", "deepspeed"), "parallelism.zero_stage",
                        "incompatible with pipeline parallelism");
  EXPECT_SCENARIO_ERROR(edit(yaml, "parallelism.framework", "fsdp"), "parallelism.zero_stage", "FULL_SHARD");
  // Without pipeline parallelism ZeRO-3 / FULL_SHARD is the usual setup.
  std::string flat = edit(edit(yaml, "parallelism.framework", "fsdp"), "parallelism.pipeline", "1");
  EXPECT_NO_THROW(parse_scenario(flat, "test.yaml"));
}

TEST(JobValidation, FaultsReferToExistingHardware) {
  // 16 GPUs in 2 nodes of 8, 8 NICs each.
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "faults", "[{kind: node_down, node: 2, at_s: 1}]"), "faults[0].node",
                        "node 2 does not exist", "2 nodes");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "faults", "[{kind: nic_down, node: 1, nic: 8, always: true}]"),
                        "faults[0].nic", "nic 8 does not exist");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "faults", "[{kind: gpu_slow, rank: 16, factor: 2, always: true}]"),
                        "faults[0].rank", "rank 16 does not exist");
  // factor is the fraction of speed left.
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "faults", "[{kind: gpu_slow, rank: 3, factor: 2, always: true}]"),
                        "faults[0].factor", "(0, 1]");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "faults", "[{kind: link_degraded, link: a-b, factor: 1.5, always: true}]"),
                        "faults[0].factor", "fraction of nominal speed");
}

}  // namespace
}  // namespace trainsim
