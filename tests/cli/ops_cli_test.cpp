// `trainsim ops`: the distinct kernels of one iteration, as the profiler (tools/profile/) reads them.
// The counts are checked against the simulator's own trace and against hand counts of a tiny model.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace trainsim_cli_test;

namespace {

// A 4-layer model small enough to read by hand: h = 256, 4 heads of 64, FFN 1024, sequence 128,
// vocabulary 2048, on PP 2 (2 layers per stage) x TP 1 x DP 1; global batch 4 of micro-batch 1 makes
// 4 micro-batches, so T = 1 x 128 = 128 tokens per micro-batch. No recompute, flash attention on.
const char* const kOpsScenario = R"(
model:
  preset: gpt3-1.3b
  num_layers: 4
  hidden_size: 256
  num_attention_heads: 4
  num_query_groups: 4
  kv_channels: 64
  ffn_hidden_size: 1024
  seq_length: 128
  vocab_size: 2048
training:
  global_batch_size: 4
  micro_batch_size: 1
  precision: bf16
parallelism:
  tensor: 1
  pipeline: 2
cluster:
  gpu: H100-SXM
  num_gpus: 2
  gpus_per_node: 2
)";

nlohmann::json ops_json(const std::string& file, const std::string& extra = "") {
  const Result r = run("ops " + file + " --json" + extra);
  EXPECT_EQ(r.status, 0) << r.out;
  if (r.status != 0) return nlohmann::json::object();
  return nlohmann::json::parse(r.out);
}

std::int64_t total_count(const nlohmann::json& j) {
  std::int64_t n = 0;
  for (const auto& op : j["ops"]) n += op["count"].get<std::int64_t>();
  return n;
}

std::set<std::string> kinds_of(const nlohmann::json& j) {
  std::set<std::string> kinds;
  for (const auto& op : j["ops"]) kinds.insert(op["op"].get<std::string>());
  return kinds;
}

const nlohmann::json* find_gemm(const nlohmann::json& j, std::int64_t m, std::int64_t n, std::int64_t k) {
  for (const auto& op : j["ops"])
    if (op["op"] == "gemm" && op["m"] == m && op["n"] == n && op["k"] == k && op["batch"] == 1) return &op;
  return nullptr;
}

bool lists_name(const nlohmann::json& op, const std::string& name) {
  for (const auto& n : op["names"])
    if (n == name) return true;
  return false;
}

}  // namespace

// The counts add up to the compute ops the simulator runs: every compute op of the simulated ranks is
// one span of category "compute" or "optimizer" in `trainsim run --trace` (collectives have their
// group as category), and there is one span per op.
TEST(OpsCli, CountsAddUpToTheComputeSpansOfTheTrace) {
  const std::string file = temp_file("ops_tiny_counts.yaml", kOpsScenario);
  const auto j = ops_json(file);
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j["gpu"], "H100-SXM");
  EXPECT_EQ(j["simulated_ranks"], 2);  // one rank per pipeline stage
  EXPECT_EQ(total_count(j), j["compute_ops"].get<std::int64_t>());

  const auto trace = std::filesystem::temp_directory_path() / "trainsim_cli_ops_tiny_counts.trace.json";
  const Result r = run("run " + file + " --no-timing --trace " + trace.string());
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream in(trace);
  const auto t = nlohmann::json::parse(in);
  std::int64_t compute_spans = 0;
  for (const auto& e : t["traceEvents"])
    if (e.value("ph", "") == "X" && (e.value("cat", "") == "compute" || e.value("cat", "") == "optimizer"))
      ++compute_spans;
  EXPECT_GT(compute_spans, 0);
  EXPECT_EQ(total_count(j), compute_spans);
}

// The kinds a GPT layer with flash attention uses, and without it the unfused softmax in place of the
// fused kernels (the score GEMMs are `gemm` rows).
TEST(OpsCli, ListsEveryKernelKindTheWorkloadUses) {
  const std::string file = temp_file("ops_tiny_kinds.yaml", kOpsScenario);
  const std::set<std::string> flash = {"cross_entropy", "elementwise", "embedding", "flash_attn_bwd", "flash_attn_fwd",
                                       "gemm",          "layernorm",   "memset",    "optimizer_step"};
  EXPECT_EQ(kinds_of(ops_json(file)), flash);
  // Unfused attention under Megatron runs the fused scale-mask-softmax kernel (an elementwise pass);
  // a plain PyTorch (FSDP) model runs the unfused softmax.
  const std::set<std::string> megatron_unfused = {"cross_entropy", "elementwise", "embedding",     "gemm",
                                                  "layernorm",     "memset",      "optimizer_step"};
  EXPECT_EQ(kinds_of(ops_json(file, " --set training.flash_attention=false")), megatron_unfused);
  const auto fsdp = kinds_of(ops_json(file,
                                      " --set training.flash_attention=false --set parallelism.framework=fsdp "
                                      "--set parallelism.zero_stage=3 --set parallelism.pipeline=1"));
  EXPECT_TRUE(fsdp.count("softmax")) << "fsdp with unfused attention must run the PyTorch softmax";
}

// Rows countable by hand in the tiny model (T = 128, h = 256, FFN 1024, 4 layers, 4 micro-batches).
TEST(OpsCli, HandCountedRowsAndGemmFlops) {
  const std::string file = temp_file("ops_tiny_rows.yaml", kOpsScenario);
  const auto j = ops_json(file);
  ASSERT_FALSE(j.empty());

  // fc1 is T x FFN x h = 128 x 1024 x 256; fc2's data gradient (dY W2^T) has the same shape. Each runs
  // once per layer and micro-batch: 2 x 4 layers x 4 micro-batches = 32.
  const nlohmann::json* fc1 = find_gemm(j, 128, 1024, 256);
  ASSERT_NE(fc1, nullptr) << j.dump(1);
  EXPECT_EQ((*fc1)["count"], 32);
  EXPECT_TRUE(lists_name(*fc1, "fc1")) << fc1->dump();
  EXPECT_TRUE(lists_name(*fc1, "fc2.dgrad")) << fc1->dump();
  EXPECT_EQ((*fc1)["dtype"], "bf16");
  // lm_head, T x vocab x h, once per micro-batch on the last stage only: 4.
  const nlohmann::json* lm_head = find_gemm(j, 128, 2048, 256);
  ASSERT_NE(lm_head, nullptr);
  EXPECT_EQ((*lm_head)["count"], 4);
  EXPECT_TRUE(lists_name(*lm_head, "lm_head"));

  // Flash attention forward: m = n = 128 (sequence), k = 64 (head dim), batch = 1 x 4 heads, causal; once per
  // layer and micro-batch = 16. Its FLOPs 4 * 4 * 128 * 128 * 64 / 2 (causal) = 8388608.
  int fwd_rows = 0;
  for (const auto& op : j["ops"]) {
    if (op["op"] != "flash_attn_fwd") continue;
    ++fwd_rows;
    EXPECT_EQ(op["m"], 128);
    EXPECT_EQ(op["n"], 128);
    EXPECT_EQ(op["k"], 64);
    EXPECT_EQ(op["batch"], 4);
    EXPECT_EQ(op["causal"], true);
    EXPECT_EQ(op["count"], 16);
    EXPECT_DOUBLE_EQ(op["flops"].get<double>(), 8388608.0);
  }
  EXPECT_EQ(fwd_rows, 1);

  // Every GEMM row's FLOPs are 2 m n k batch; memory-bound rows carry their bytes and no shape.
  for (const auto& op : j["ops"]) {
    if (op["op"] == "gemm") {
      const double expect =
          2.0 * op["m"].get<double>() * op["n"].get<double>() * op["k"].get<double>() * op["batch"].get<double>();
      EXPECT_DOUBLE_EQ(op["flops"].get<double>(), expect) << op.dump();
    } else if (op["op"] != "flash_attn_fwd" && op["op"] != "flash_attn_bwd") {
      EXPECT_EQ(op["m"], 0) << op.dump();
      EXPECT_EQ(op["batch"], 1) << op.dump();
      EXPECT_GT(op["bytes"].get<std::int64_t>(), 0) << op.dump();
    }
    EXPECT_GT(op["count"].get<std::int64_t>(), 0) << op.dump();
    EXPECT_FALSE(op["names"].empty()) << op.dump();
    EXPECT_LE(op["names"].size(), 4u) << op.dump();
  }
}

// Rows are sorted by kind name, then shape (m, n, k, batch, causal, bytes), then dtype, and unique.
TEST(OpsCli, RowsAreSortedAndDistinct) {
  const std::string file = temp_file("ops_tiny_sorted.yaml", kOpsScenario);
  const auto j = ops_json(file);
  ASSERT_FALSE(j.empty());
  using Key =
      std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool, std::int64_t, std::string>;
  auto key = [](const nlohmann::json& op) {
    return Key{op["op"].get<std::string>(),     op["m"].get<std::int64_t>(),     op["n"].get<std::int64_t>(),
               op["k"].get<std::int64_t>(),     op["batch"].get<std::int64_t>(), op["causal"].get<bool>(),
               op["bytes"].get<std::int64_t>(), op["dtype"].get<std::string>()};
  };
  ASSERT_GT(j["ops"].size(), 1u);
  for (std::size_t i = 1; i < j["ops"].size(); ++i)
    EXPECT_LT(key(j["ops"][i - 1]), key(j["ops"][i])) << "rows " << i - 1 << " and " << i;
  // The same listing twice: deterministic.
  EXPECT_EQ(ops_json(file), j);
}

TEST(OpsCli, TextTableHasOneLinePerKernel) {
  const std::string file = temp_file("ops_tiny_text.yaml", kOpsScenario);
  const auto j = ops_json(file);
  const Result r = run("ops " + file);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("used by"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(std::to_string(j["ops"].size()) + " distinct kernels"), std::string::npos) << r.out;
  std::size_t gemm_lines = 0, gemm_rows = 0;
  for (std::size_t p = r.out.find("\n  gemm "); p != std::string::npos; p = r.out.find("\n  gemm ", p + 1))
    ++gemm_lines;
  for (const auto& op : j["ops"]) gemm_rows += op["op"] == "gemm" ? 1 : 0;
  EXPECT_EQ(gemm_lines, gemm_rows) << r.out;
}

TEST(OpsCli, BadInputNamesTheKeyOrFile) {
  const std::string file = temp_file("ops_tiny_bad.yaml", kOpsScenario);
  const Result bad_key = run("ops " + file + " --set parallelism.tensr=2");
  EXPECT_EQ(bad_key.status, 1) << bad_key.out;
  EXPECT_NE(bad_key.out.find("parallelism.tensr"), std::string::npos) << bad_key.out;
  const Result bad_value = run("ops " + file + " --set parallelism.pipeline=3");  // 3 stages on 2 GPUs
  EXPECT_EQ(bad_value.status, 1) << bad_value.out;
  EXPECT_NE(bad_value.out.find(file + ": cluster.num_gpus: num_gpus 2 is fewer than tensor 1 x pipeline 3"),
            std::string::npos)
      << bad_value.out;
  const Result missing = run("ops /nonexistent/ops.yaml --json");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.out.find("/nonexistent/ops.yaml"), std::string::npos) << missing.out;
}
