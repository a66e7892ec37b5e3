// A measured op database end to end (compute.database, compute.scale_from; docs/op-database.md): measured
// kernels take the database's time, the rest fall back to the roofline and are reported as modelled, and a
// database measured on another GPU is scaled by SimAI-CP-Model's peak or bandwidth ratio.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "hardware/gpu_catalog.hpp"

using namespace trainsim_cli_test;

namespace {

// gpt3-1.3b, TP 2, micro-batch 2 (examples/tiny-8-h100.yaml): fc1 is a 4096x4096x2048 GEMM, run 96 times per iteration.
// `tag` names the scenario file: ctest runs these tests in parallel, each needs its own.
std::string scenario_with(const std::string& tag, const std::string& db_path, const std::string& scale_from = "") {
  std::string yaml = R"(
model: {preset: gpt3-1.3b}
training: {global_batch_size: 32, micro_batch_size: 2, precision: bf16}
parallelism: {tensor: 2, pipeline: 1, sequence_parallel: true}
cluster: {gpu: H100-SXM, num_gpus: 8, gpus_per_node: 8, nics_per_node: 8, nic_gbps: 400}
compute:
  database: )" + db_path +
                     "\n";
  if (!scale_from.empty()) yaml += "  scale_from: " + scale_from + "\n";
  return temp_file("opdb_scenario_" + tag + ".yaml", yaml);
}

const nlohmann::json* row_named(const nlohmann::json& rows, const std::string& name) {
  for (const auto& r : rows)
    if (r["name"] == name) return &r;
  return nullptr;
}

TEST(OpDatabaseCli, MeasuredKernelsUseTheDatabaseAndTheRestAreReportedAsModelled) {
  const std::string db = temp_file("opdb_h100.csv",
                                   "# one GEMM measured on H100\n"
                                   "gpu,op,dtype,m,n,k,batch,causal,bytes,time_us\n"
                                   "H100-SXM,gemm,bf16,4096,4096,2048,1,0,0,200\n");
  const Result r = run("run " + scenario_with("measured", db) + " --json --explain");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const auto* fc1 = row_named(j["explain"]["ops"], "fc1");
  ASSERT_NE(fc1, nullptr) << r.out;
  EXPECT_EQ((*fc1)["source"], "measured");
  EXPECT_EQ((*fc1)["count"].get<int>(), 96);
  EXPECT_NEAR((*fc1)["time_s"].get<double>(), 96 * 200e-6, 1e-9);
  // Attention has no rows: the roofline prices it, and the report lists it among the modelled kernels.
  const auto* attn = row_named(j["explain"]["ops"], "core_attn.bwd");
  ASSERT_NE(attn, nullptr);
  EXPECT_EQ((*attn)["source"], "roofline");
  const auto& c = j["compute"];
  EXPECT_GT(c["measured_ops"].get<int>(), 0);
  EXPECT_GT(c["modelled_ops"].get<int>(), 0);
  EXPECT_EQ(c["scaled_ops"].get<int>(), 0);
  bool attention_listed = false;
  for (const auto& m : c["modelled"])
    attention_listed = attention_listed || m["kernel"].get<std::string>().starts_with("flash_attn_bwd");
  EXPECT_TRUE(attention_listed) << c.dump();
}

// The same GEMM measured at 400 us on an A100 is compute-bound there (about 1000 FLOP/B against a ridge of
// 312e12 / 2039e9 = 153), so on the H100 it takes 400 us x peak_A100 / peak_H100 (bf16).
TEST(OpDatabaseCli, ScaleFromAnotherGpuUsesThePeakRatio) {
  const std::string db = temp_file("opdb_a100.csv",
                                   "gpu,op,dtype,m,n,k,batch,causal,bytes,time_us\n"
                                   "A100-SXM-80GB,gemm,bf16,4096,4096,2048,1,0,0,400\n");
  const Result r = run("run " + scenario_with("scaled", db, "A100-SXM-80GB") + " --json --explain");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const auto& catalog = trainsim::GpuCatalog::builtin();
  const double ratio = catalog.find("A100-SXM-80GB")->peak_tflops(trainsim::Precision::BF16) /
                       catalog.find("H100-SXM")->peak_tflops(trainsim::Precision::BF16);
  const auto* fc1 = row_named(j["explain"]["ops"], "fc1");
  ASSERT_NE(fc1, nullptr);
  EXPECT_EQ((*fc1)["source"], "scaled");
  EXPECT_NEAR((*fc1)["time_s"].get<double>(), 96 * 400e-6 * ratio, 1e-9);
  EXPECT_GT(j["compute"]["scaled_ops"].get<int>(), 0);
  EXPECT_EQ(j["compute"]["scale_from"], "A100-SXM-80GB");
}

TEST(OpDatabaseCli, BadDatabasesNameTheKeyAndTheLine) {
  const Result missing = run("run " + scenario_with("missing", "/nonexistent/ops.csv"));
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.out.find("compute.database"), std::string::npos) << missing.out;
  EXPECT_NE(missing.out.find("/nonexistent/ops.csv"), std::string::npos) << missing.out;

  const std::string bad = temp_file("opdb_bad.csv",
                                    "gpu,op,dtype,m,n,k,batch,causal,bytes,time_us\n"
                                    "H100-SXM,gemm,bf16,4096,4096,2048,1,0,0,200\n"
                                    "H100-SXM,gemm,bf16,4096,4096,2048,1,0,0\n");
  const Result malformed = run("run " + scenario_with("malformed", bad));
  EXPECT_EQ(malformed.status, 1);
  EXPECT_NE(malformed.out.find("opdb_bad.csv:3"), std::string::npos) << malformed.out;
  EXPECT_NE(malformed.out.find("compute.database"), std::string::npos) << malformed.out;

  const std::string other = temp_file("opdb_other.csv",
                                      "gpu,op,dtype,m,n,k,batch,causal,bytes,time_us\n"
                                      "A100-SXM-80GB,gemm,bf16,4096,4096,2048,1,0,0,400\n");
  const Result no_rows = run("run " + scenario_with("other_gpu", other));
  EXPECT_EQ(no_rows.status, 1);
  EXPECT_NE(no_rows.out.find("no rows for cluster.gpu H100-SXM"), std::string::npos) << no_rows.out;
  EXPECT_NE(no_rows.out.find("compute.scale_from"), std::string::npos) << no_rows.out;
}

}  // namespace
