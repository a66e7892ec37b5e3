// `trainsim memory`: the per-stage table of the memory model, as a user screens a configuration
// before booking the cluster.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace trainsim_cli_test;

namespace {
double sum_of_parts(const nlohmann::json& st) {
  return st["weights"].get<double>() + st["grads"].get<double>() + st["optimizer"].get<double>() +
         st["activations"].get<double>() + st["other"].get<double>();
}
}  // namespace

// GPT-3 175B on TP 8 x PP 8 with 1F1B: one row per stage, stage k holds p - k micro-batches, the parts add up,
// the worst stage is the largest total and agrees with the memory block of `trainsim run --json`.
TEST(MemoryCli, OneRowPerStageAgreeingWithTheRunReport) {
  const Result r = run("memory " + example("gpt3-175b-1024-h100.yaml") + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["stages"].size(), 8u);
  double worst = 0;
  int worst_stage = -1, layers = 0;
  for (std::size_t k = 0; k < 8; ++k) {
    const auto& st = j["stages"][k];
    EXPECT_EQ(st["stage"].get<int>(), static_cast<int>(k));
    EXPECT_EQ(st["in_flight_micro_batches"].get<int>(), 8 - static_cast<int>(k));
    EXPECT_NEAR(st["total"].get<double>(), sum_of_parts(st), 1e-9);
    layers += st["layers"].get<int>();
    if (st["total"].get<double>() > worst) worst = st["total"].get<double>(), worst_stage = static_cast<int>(k);
  }
  EXPECT_EQ(layers, 96);
  EXPECT_EQ(j["worst_stage"].get<int>(), worst_stage);
  EXPECT_DOUBLE_EQ(j["peak"].get<double>(), worst);
  EXPECT_TRUE(j["fits"].get<bool>());

  const Result rr = run("run " + example("gpt3-175b-1024-h100.yaml") + " --json");
  ASSERT_EQ(rr.status, 0) << rr.out;
  EXPECT_NEAR(nlohmann::json::parse(rr.out)["memory"]["peak"].get<double>(), worst, 1e-9);
}

// Fewer, wider stages: PP 2, TP 4, micro-batch 4 without recompute needs about 210 GiB on stage 0. The table still
// prints, with the stage that overflows; the exit status says so unless --allow-oom.
TEST(MemoryCli, OverflowingStageFailsUnlessAllowed) {
  const std::string args = "memory " + example("gpt3-175b-1024-h100.yaml") +
                           " --set parallelism.pipeline=2 --set parallelism.tensor=4 --set training.micro_batch_size=4"
                           " --set training.recompute=none";
  const Result r = run(args);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("does NOT fit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("does not fit: pipeline stage 0"), std::string::npos) << r.out;
  const Result allowed = run(args + " --allow-oom --json");
  ASSERT_EQ(allowed.status, 0) << allowed.out;
  const auto j = nlohmann::json::parse(allowed.out);
  EXPECT_FALSE(j["fits"].get<bool>());
  EXPECT_FALSE(j["stages"][0]["fits"].get<bool>());
  EXPECT_GT(j["peak"].get<double>(), j["capacity_gib"].get<double>());
}

TEST(MemoryCli, RecomputeShrinksActivationsPerMicroBatch) {
  auto act = [](const std::string& recompute) {
    const Result r =
        run("memory " + example("gpt3-175b-1024-h100.yaml") + " --json --set training.recompute=" + recompute);
    EXPECT_EQ(r.status, 0) << r.out;
    return nlohmann::json::parse(r.out)["stages"][1]["activations_per_micro_batch"].get<double>();
  };
  const double full = act("full"), selective = act("selective");
  EXPECT_LT(full, selective);
  EXPECT_GT(full, 0);
}

TEST(MemoryCli, BadInputNamesTheKey) {
  const Result r = run("memory " + example("gpt3-175b-1024-h100.yaml") +
                       " --set parallelism.tensor=3");  // 1024 GPUs do not split by 3 x 8
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("cluster.num_gpus: num_gpus 1024 is not divisible by tensor 3"), std::string::npos) << r.out;
  const Result missing = run("memory /nonexistent/scenario.yaml");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.out.find("/nonexistent/scenario.yaml"), std::string::npos) << missing.out;
}
