// `trainsim run --explain`: the critical rank's ten longest ops and collectives with their share of the
// iteration and where each time came from.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace trainsim_cli_test;

TEST(ExplainCli, TenLongestOpsAndCollectivesOfTheCriticalRank) {
  const Result r = run("run " + example("gpt3-175b-1024-h100.yaml") + " --json --explain");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const auto& e = j["explain"];
  EXPECT_EQ(e["rank"].get<int>(), j["critical_rank"].get<int>());
  const double iteration = j["iteration_time_s"].get<double>();
  for (const char* part : {"ops", "collectives"}) {
    const auto& rows = e[part];
    ASSERT_EQ(rows.size(), 10u) << part;
    double previous = 1e300, shares = 0;
    for (const auto& row : rows) {
      const double t = row["time_s"].get<double>();
      EXPECT_LE(t, previous) << part << ": longest first";
      previous = t;
      EXPECT_NEAR(row["share"].get<double>(), t / iteration, 1e-12);
      EXPECT_LE(row["exposed_s"].get<double>(), t + 1e-12);
      EXPECT_GT(row["count"].get<int>(), 0);
      shares += row["share"].get<double>();
    }
    if (std::string(part) == "ops") {
      // Kernels run one at a time on the compute stream: their shares cannot add up to more than the iteration.
      EXPECT_LE(shares, 1.0);
      EXPECT_EQ(rows[0]["source"], "roofline");
    } else {
      EXPECT_EQ(rows[0]["source"], "nccl-model");
    }
  }
  // GPT-3's MLP GEMMs are among the longest ops: fc1 runs once per layer and micro-batch on a stage.
  bool fc1 = false;
  for (const auto& row : e["ops"]) fc1 = fc1 || row["name"] == "fc1";
  EXPECT_TRUE(fc1);
}

TEST(ExplainCli, OnlyWhenAsked) {
  const Result r = run("run " + example("tiny-8-h100.yaml") + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_FALSE(nlohmann::json::parse(r.out).contains("explain"));
  const Result text = run("run " + example("tiny-8-h100.yaml") + " --explain");
  ASSERT_EQ(text.status, 0);
  EXPECT_NE(text.out.find("Longest ops (rank"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Longest collectives (rank"), std::string::npos) << text.out;
}

// What set each kernel's speed: the efficiency of its shape, the clock factor (sustained clock and the
// job's slowest GPU), and what the collectives beside it added, with alone + interference = time.
TEST(ExplainCli, SaysWhatSetEachKernelsSpeed) {
  const std::string file = example("gpt3-175b-1024-h100.yaml");
  const Result r = run("run " + file + " --json --explain");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto ops = nlohmann::json::parse(r.out)["explain"]["ops"];
  bool gemm_seen = false, interfered = false;
  for (const auto& row : ops) {
    const double t = row["time_s"], alone = row["alone_s"], extra = row["interference_s"];
    EXPECT_NEAR(alone + extra, t, 1e-9 * t + 1e-12) << row["name"];
    EXPECT_GE(extra, 0.0);
    interfered = interfered || extra > 0;
    if (row["detail"].get<std::string>().rfind("gemm", 0) == 0) {
      gemm_seen = true;
      EXPECT_GT(row["efficiency"].get<double>(), 0.3) << row["name"];
      EXPECT_LE(row["efficiency"].get<double>(), 0.8) << row["name"];
      // Short-run GEMM tables lose the long-run share; 1,024 GPUs run at their slowest one's pace.
      EXPECT_LT(row["clock_factor"].get<double>(), 0.96) << row["name"];
      EXPECT_NE(row["why"].get<std::string>().find("of dense peak"), std::string::npos) << row["why"];
    }
  }
  EXPECT_TRUE(gemm_seen);
  // The data-parallel reduce-scatters overlap the backward GEMMs.
  EXPECT_TRUE(interfered);
  // Priced alone, nothing is added.
  const Result alone = run("run " + file + " --json --explain --set compute.interference=false");
  ASSERT_EQ(alone.status, 0) << alone.out;
  const auto alone_json = nlohmann::json::parse(alone.out);  // rows point into it: keep it alive
  for (const auto& row : alone_json["explain"]["ops"])
    EXPECT_DOUBLE_EQ(row["interference_s"].get<double>(), 0.0) << row["name"];
}

// An eager PyTorch model (training.fusion: eager) says so where it matters: PyTorch's own layer_norm kernel and
// the attention's layout copies are named as such. A narrow model keeps them among the ten longest ops.
TEST(ExplainCli, NamesEagerPyTorchKernels) {
  const std::string file = temp_file("eager-explain.yaml", R"(
model: {family: gpt, num_layers: 2, hidden_size: 256, num_attention_heads: 2, ffn_hidden_size: 256,
        vocab_size: 256, seq_length: 4096}
training: {global_batch_size: 8, micro_batch_size: 8, precision: bf16, fusion: eager}
parallelism: {tensor: 1, pipeline: 1}
cluster: {gpu: H100-SXM, num_gpus: 1, gpus_per_node: 1}
)");
  const Result r = run("run " + file + " --json --explain");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto ops = nlohmann::json::parse(r.out)["explain"]["ops"];
  bool norm = false, layout = false;
  for (const auto& row : ops) {
    const std::string why = row["why"], detail = row["detail"];
    if (detail.rfind("torch_layernorm", 0) == 0) {
      norm = true;
      EXPECT_NE(why.find("PyTorch's own layer_norm"), std::string::npos) << why;
    }
    if (row["name"].get<std::string>().find("_layout") != std::string::npos) {
      layout = true;
      EXPECT_NE(why.find("layout copy"), std::string::npos) << why;
    }
  }
  EXPECT_TRUE(norm) << r.out;
  EXPECT_TRUE(layout) << r.out;
}
