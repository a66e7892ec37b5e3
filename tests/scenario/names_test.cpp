// to_string gives the spellings the scenario file uses, so messages and reports round-trip.
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

TEST(Names, CollectiveOps) {
  EXPECT_STREQ(to_string(CollectiveOp::AllReduce), "all_reduce");
  EXPECT_STREQ(to_string(CollectiveOp::AllGather), "all_gather");
  EXPECT_STREQ(to_string(CollectiveOp::ReduceScatter), "reduce_scatter");
  EXPECT_STREQ(to_string(CollectiveOp::Broadcast), "broadcast");
  EXPECT_STREQ(to_string(CollectiveOp::Reduce), "reduce");
  EXPECT_STREQ(to_string(CollectiveOp::AllToAll), "alltoall");
  EXPECT_STREQ(to_string(CollectiveOp::SendRecv), "sendrecv");
}

TEST(Names, FrameworksAndRecompute) {
  EXPECT_STREQ(to_string(Framework::Megatron), "megatron");
  EXPECT_STREQ(to_string(Framework::DeepSpeed), "deepspeed");
  EXPECT_STREQ(to_string(Framework::FSDP), "fsdp");
  EXPECT_STREQ(to_string(RecomputeGranularity::None), "none");
  EXPECT_STREQ(to_string(RecomputeGranularity::Selective), "selective");
  EXPECT_STREQ(to_string(RecomputeGranularity::Full), "full");
}

TEST(Names, NamesRoundTripThroughTheParser) {
  // Every op name the parser accepts is the one to_string gives back.
  for (CollectiveOp op :
       {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::Broadcast,
        CollectiveOp::Reduce, CollectiveOp::AllToAll, CollectiveOp::SendRecv}) {
    const Scenario s = parse_scenario(
        std::string("cluster: {gpu: H100-SXM, num_gpus: 8}\ncollective: {op: ") + to_string(op) + "}\n", "test.yaml");
    EXPECT_EQ(s.collective->op, op);
  }
}

TEST(Names, NcclGet) {
  NcclSpec spec;
  spec.env["NCCL_ALGO"] = "Tree";
  EXPECT_EQ(spec.get("NCCL_ALGO"), "Tree");
  EXPECT_FALSE(spec.get("NCCL_PROTO").has_value());
}

}  // namespace
}  // namespace trainsim
