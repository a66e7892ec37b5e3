// Op::launches: the kernels the host launches for each op. One per kernel or collective; an eager PyTorch op
// chain (RMSNorm, SwiGLU, RoPE) counts each op of the chain; training.cuda_graphs replays each layer's pass
// as one graph launch (workload/cuda_graphs.cpp).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"

namespace trainsim {
namespace {

Scenario launches_scenario(const std::string& fusion, bool graphs, const std::vector<std::string>& extra = {}) {
  const std::string yaml = R"(
model:
  family: llama
  num_layers: 2
  hidden_size: 1024
  num_attention_heads: 8
  ffn_hidden_size: 4096
  vocab_size: 1024
  seq_length: 2048
training:
  global_batch_size: 8
  micro_batch_size: 1
  precision: bf16
  fusion: )" + fusion + R"(
  cuda_graphs: )" + (graphs ? "true" : "false") +
                           R"(
parallelism:
  tensor: 2
  pipeline: 1
cluster:
  gpu: H100-SXM
  num_gpus: 8
  gpus_per_node: 8
)";
  return parse_scenario(yaml, "launches.yaml", extra);
}

// Launches by op name over layer 0, micro-batch 0 of rank 0, and the total of the rank.
struct Launches {
  std::map<std::string, int> layer0;
  int total = 0;
};

Launches launches(const Scenario& s) {
  const Workload wl = generate_workload(s, {});
  Launches out;
  for (const Op& op : wl.ranks[0].ops) {
    out.total += op.launches;
    if (op.layer == 0 && op.micro_batch == 0 && op.phase != Phase::Recompute)
      out.layer0[wl.names[op.name]] += op.launches;
  }
  return out;
}

TEST(HostLaunches, FusedKernelsAreOneLaunchEach) {
  const auto l = launches(launches_scenario("fused", false));
  EXPECT_EQ(l.layer0.at("input_norm"), 1);
  EXPECT_EQ(l.layer0.at("qkv"), 1);
  EXPECT_EQ(l.layer0.at("rope"), 1);
  EXPECT_EQ(l.layer0.at("swiglu"), 1);
  EXPECT_EQ(l.layer0.at("tp.rs.proj"), 1);
}

TEST(HostLaunches, EagerChainsCountEveryOp) {
  const auto l = launches(launches_scenario("eager", false));
  EXPECT_EQ(l.layer0.at("input_norm"), 8);  // upcast, pow, mean, + eps, rsqrt, scale, downcast, weight
  EXPECT_EQ(l.layer0.at("input_norm.bwd"), 14);
  EXPECT_EQ(l.layer0.at("swiglu"), 2);
  EXPECT_EQ(l.layer0.at("swiglu.bwd"), 3);
  EXPECT_EQ(l.layer0.at("rope"), 10);
  EXPECT_EQ(l.layer0.at("qkv"), 1);
  EXPECT_GT(l.total, launches(launches_scenario("fused", false)).total);
}

// With graphs a layer's forward costs one launch and its backward one, whatever it holds; what lies outside the
// layers (embedding, loss, optimizer) keeps its launches.
TEST(HostLaunches, CudaGraphsLaunchEachLayerPassOnce) {
  const Workload wl = generate_workload(launches_scenario("eager", true), {});
  std::map<std::tuple<int, int, Phase>, int> per_pass;
  int outside = 0, outside_eager = 0;
  for (const Op& op : wl.ranks[0].ops) {
    if (op.layer >= 0 && (op.stream == Stream::Compute || op.stream == Stream::TpComm))
      per_pass[{op.layer, op.micro_batch, op.phase}] += op.launches;
    else
      outside += op.launches;
  }
  const Workload eager = generate_workload(launches_scenario("eager", false), {});
  for (const Op& op : eager.ranks[0].ops)
    if (!(op.layer >= 0 && (op.stream == Stream::Compute || op.stream == Stream::TpComm))) outside_eager += op.launches;
  ASSERT_FALSE(per_pass.empty());
  for (const auto& [pass, n] : per_pass)
    EXPECT_EQ(n, 1) << "layer " << std::get<0>(pass) << " micro-batch " << std::get<1>(pass);
  EXPECT_EQ(outside, outside_eager);
}

TEST(HostLaunches, CudaGraphsKeyIsABool) {
  try {
    launches_scenario("fused", false, {"training.cuda_graphs=sometimes"});
    FAIL() << "accepted cuda_graphs: sometimes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("training.cuda_graphs"), std::string::npos) << e.what();
  }
  try {
    launches_scenario("fused", false, {"compute.host_launch_us=-1"});
    FAIL() << "accepted host_launch_us: -1";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("compute.host_launch_us"), std::string::npos) << e.what();
  }
  try {
    launches_scenario("fused", false, {"compute.host_launch_us=1e12"});  // would overflow the engine's clock
    FAIL() << "accepted host_launch_us: 1e12";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("compute.host_launch_us"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainsim
