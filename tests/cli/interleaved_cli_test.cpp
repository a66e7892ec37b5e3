// End-to-end: the interleaved 1F1B schedule (virtual_pipeline > 1) through the whole simulator, as a
// user runs it. The engine throws on any p2p call that does not pair up and on deadlock, so a clean
// run checks that every rank's isend/irecv sequence matches its neighbours'.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace trainsim_cli_test;

namespace {

nlohmann::json run_json(const std::string& args) {
  const Result r = run("run " + args + " --json --no-timing");
  EXPECT_EQ(r.status, 0) << args << "\n" << r.out;
  if (r.status != 0) return nlohmann::json::object();
  return nlohmann::json::parse(r.out);
}

// A 16-layer GPT-3 1.3B-shaped model on one 8-GPU node: PP 4 x DP 2, 16 micro-batches per DP rank.
const char* const kSmall = R"(
model:
  preset: gpt3-1.3b
  num_layers: 16
training:
  global_batch_size: 32
  micro_batch_size: 1
  precision: bf16
parallelism:
  tensor: 1
  pipeline: 4
  virtual_pipeline: 2
cluster:
  gpu: H100-SXM
  num_gpus: 8
  gpus_per_node: 8
  nics_per_node: 8
  nic_gbps: 400
)";

}  // namespace

// The interleaved example runs, obeys the result identities, and beats the non-interleaved demo it
// copies: the pipeline bubble shrinks ((p-1)/m -> (p-1)/(v*m) in the ideal), and more pipeline p2p
// traffic is exposed (v times the transfers).
TEST(InterleavedCli, ExampleRunsAndShrinksTheBubbleOfTheDemo) {
  // Kernels priced alone: the schedules overlap different collectives with compute (interference).
  const auto il = run_json(example("gpt3-175b-1024-h100-interleaved.yaml") + " --set compute.interference=false");
  const auto base = run_json(example("gpt3-175b-1024-h100.yaml") + " --set compute.interference=false");
  ASSERT_FALSE(il.empty());
  ASSERT_FALSE(base.empty());
  const double t = il["iteration_time_s"];
  const auto& b = il["breakdown"];
  const double sum = b["compute"].get<double>() + b["exposed_comm"].get<double>() + b["bubble"].get<double>() +
                     b["optimizer"].get<double>() + b["other"].get<double>();
  EXPECT_NEAR(sum, t, 1e-6 * t);
  // The same work; only the per-bucket gradient scaling kernels differ, because with interleaving
  // only chunk 0 of stage 0 is split into DDP buckets (param_and_grad_buffer.py).
  EXPECT_NEAR(b["compute"].get<double>(), base["breakdown"]["compute"].get<double>(), 1e-4 * t);
  EXPECT_LT(b["bubble"].get<double>(), 0.5 * base["breakdown"]["bubble"].get<double>());
  EXPECT_LT(t, base["iteration_time_s"].get<double>());
  EXPECT_GT(b["exposed_comm_by_group"]["pp"].get<double>(),
            base["breakdown"]["exposed_comm_by_group"]["pp"].get<double>());
  EXPECT_TRUE(il["memory"]["fits"].get<bool>());
}

// More chunks, smaller bubble, on a small job; the same compute whatever v is.
TEST(InterleavedCli, BubbleShrinksWithMoreChunks) {
  const std::string file = temp_file("interleaved_small.yaml", kSmall);
  const std::string alone = " --set compute.interference=false";  // the same kernels, priced alone
  const auto v1 = run_json(file + " --set parallelism.virtual_pipeline=1" + alone);
  const auto v2 = run_json(file + alone);
  const auto v4 = run_json(file + " --set parallelism.virtual_pipeline=4" + alone);
  ASSERT_FALSE(v1.empty());
  ASSERT_FALSE(v2.empty());
  ASSERT_FALSE(v4.empty());
  const double b1 = v1["breakdown"]["bubble"], b2 = v2["breakdown"]["bubble"], b4 = v4["breakdown"]["bubble"];
  EXPECT_LT(b2, b1);
  EXPECT_LT(b4, b2);
  EXPECT_LT(v2["iteration_time_s"].get<double>(), v1["iteration_time_s"].get<double>());
  const double c1 = v1["breakdown"]["compute"];
  EXPECT_NEAR(v2["breakdown"]["compute"].get<double>(), c1, 1e-4 * c1);  // up to bucket kernels
}

// Every rank simulated (both data-parallel pipelines, each with its own ring of pairs): still no
// mismatch or deadlock, and the same iteration as one timeline per stage.
TEST(InterleavedCli, EveryRankSimulatedAgrees) {
  const std::string file = temp_file("interleaved_small_per_rank.yaml", kSmall);
  const auto one = run_json(file);
  const auto all = run_json(file + " --per-rank");
  ASSERT_FALSE(one.empty());
  ASSERT_FALSE(all.empty());
  const double t = one["iteration_time_s"];
  EXPECT_NEAR(all["iteration_time_s"].get<double>(), t, 1e-3 * t);
}

// Megatron's rule: micro-batches per iteration a multiple of the pipeline size (here 32/(1*2) = 16 -> 18).
TEST(InterleavedCli, RejectsAMicroBatchCountThatIsNotAMultipleOfThePipeline) {
  const std::string file = temp_file("interleaved_small_bad.yaml", kSmall);
  const Result r = run("run " + file + " --set training.global_batch_size=36");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("parallelism.virtual_pipeline"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("multiple of the pipeline size"), std::string::npos) << r.out;
}
