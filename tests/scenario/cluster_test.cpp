// cluster.gpu (catalog ids and aliases), cluster.gpu_spec, scale-up and network keys.
#include "hardware/gpu_catalog.hpp"
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

TEST(Cluster, CatalogGpuIsResolved) {
  const GpuSpec* h100 = GpuCatalog::builtin().find("H100-SXM");
  ASSERT_NE(h100, nullptr);
  const Scenario s = parse_scenario(kValidScenario, "test.yaml");
  EXPECT_EQ(s.cluster.gpu.name, h100->name);
  EXPECT_EQ(s.cluster.gpu.bf16_tflops, h100->bf16_tflops);
}

TEST(Cluster, AliasResolvesToTheSameEntry) {
  const GpuSpec* by_alias = GpuCatalog::builtin().find("A100-SXM4-80GB");
  if (by_alias == nullptr) GTEST_SKIP() << "alias A100-SXM4-80GB not in the catalog";
  const Scenario s = parse_scenario(edit(kValidScenario, "cluster.gpu", "A100-SXM4-80GB"), "test.yaml");
  EXPECT_EQ(s.cluster.gpu.name, by_alias->name);  // the catalog id, not the alias
}

TEST(Cluster, UnknownGpuListsKnownIds) {
  const std::vector<std::string> ids = GpuCatalog::builtin().names();
  ASSERT_FALSE(ids.empty());
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.gpu", "X9000"), "cluster.gpu", "unknown GPU 'X9000'",
                        "known GPUs:", ids.front(), ids.back());
}

TEST(Cluster, GpuSpecAlone) {
  std::string yaml = edit(kValidScenario, "cluster.gpu", nullptr);
  yaml = edit(yaml, "cluster.gpu_spec",
              "{peak_tflops: {bf16: 1000, fp8: 2000, fp32: 60}, hbm_GBps: 4000, memory_gib: 96, scale_up_GBps: 450}");
  const Scenario s = parse_scenario(yaml, "test.yaml");
  EXPECT_EQ(s.cluster.gpu.name, "custom");
  EXPECT_EQ(s.cluster.gpu.bf16_tflops, 1000.0);
  EXPECT_EQ(s.cluster.gpu.fp8_tflops, 2000.0);
  EXPECT_FALSE(s.cluster.gpu.fp16_tflops.has_value());  // not stated: not invented
  EXPECT_DOUBLE_EQ(s.cluster.gpu.hbm_GBps, 4000);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.memory_gib, 96);
  EXPECT_DOUBLE_EQ(s.cluster.scale_up.bandwidth_GBps, 450);  // defaults to the GPU's scale_up_GBps
}

TEST(Cluster, PowerLimitLowersTheTensorClock) {
  const Scenario s = parse_scenario(edit(kValidScenario, "cluster.gpu_power_limit_w", "500"), "test.yaml");
  EXPECT_DOUBLE_EQ(s.cluster.gpu.power_limit_w, 500);
  EXPECT_NEAR(s.cluster.gpu.power_limited_clock_mhz, 1311, 1);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.sustained_clock_mhz, 1580);  // the rated clock stays, for the report
  // Without the key: no limit.
  const Scenario rated = parse_scenario(kValidScenario, "test.yaml");
  EXPECT_EQ(rated.cluster.gpu.power_limit_w, 0);
  EXPECT_EQ(rated.cluster.gpu.power_limited_clock_mhz, 0);
}

TEST(Cluster, PowerLimitOutsideWhatTheModelCoversIsRefused) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.gpu_power_limit_w", "800"), "cluster.gpu_power_limit_w",
                        "800 W is above H100-SXM's rated power of 700 W");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.gpu_power_limit_w", "200"), "cluster.gpu_power_limit_w",
                        "below 245 W", "35%");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.gpu_power_limit_w", "0"), "cluster.gpu_power_limit_w",
                        "expected a positive number");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.gpu_power_limit_w", "lots"), "cluster.gpu_power_limit_w");
  // A GPU given by its datasheet alone has no rated power or clocks to read a limit against.
  std::string yaml = edit(kValidScenario, "cluster.gpu", nullptr);
  yaml =
      edit(yaml, "cluster.gpu_spec", "{peak_tflops: {bf16: 1000}, hbm_GBps: 4000, memory_gib: 96, scale_up_GBps: 450}");
  EXPECT_SCENARIO_ERROR(edit(yaml, "cluster.gpu_power_limit_w", "500"), "cluster.gpu_power_limit_w",
                        "has no rated power and sustained clock");
}

TEST(Cluster, GpuSpecAloneNeedsEssentials) {
  std::string yaml = edit(kValidScenario, "cluster.gpu", nullptr);
  EXPECT_SCENARIO_ERROR(edit(yaml, "cluster.gpu_spec", "{hbm_GBps: 4000, memory_gib: 96}"),
                        "cluster.gpu_spec.peak_tflops", "missing required key cluster.gpu_spec.peak_tflops");
  EXPECT_SCENARIO_ERROR(edit(yaml, "cluster.gpu_spec", "{peak_tflops: {bf16: 900}, memory_gib: 96}"),
                        "cluster.gpu_spec.hbm_GBps", "missing required key");
  EXPECT_SCENARIO_ERROR(edit(yaml, "cluster.gpu_spec", "{peak_tflops: {bf16: 0}, hbm_GBps: 1, memory_gib: 96}"),
                        "cluster.gpu_spec.peak_tflops.bf16", "expected a positive number");
}

TEST(Cluster, GpuSpecWithoutScaleUpNeedsBandwidth) {
  std::string yaml = edit(kValidScenario, "cluster.gpu", nullptr);
  yaml = edit(yaml, "cluster.gpu_spec", "{peak_tflops: {bf16: 1000}, hbm_GBps: 4000, memory_gib: 96}");
  EXPECT_SCENARIO_ERROR(yaml, "cluster.scale_up.bandwidth_GBps",
                        "missing required key cluster.scale_up.bandwidth_GBps");
  EXPECT_NO_THROW(parse_scenario(edit(yaml, "cluster.scale_up.bandwidth_GBps", "300"), "test.yaml"));
}

TEST(Cluster, GpuSpecOverridesCatalogEntry) {
  const GpuSpec* h100 = GpuCatalog::builtin().find("H100-SXM");
  ASSERT_NE(h100, nullptr);
  const Scenario s = parse_scenario(
      edit(kValidScenario, "cluster.gpu_spec", "{peak_tflops: {bf16: 700}, memory_gib: 64}"), "test.yaml");
  EXPECT_EQ(s.cluster.gpu.name, h100->name);
  EXPECT_EQ(s.cluster.gpu.bf16_tflops, 700.0);            // overridden
  EXPECT_DOUBLE_EQ(s.cluster.gpu.memory_gib, 64);         // overridden
  EXPECT_EQ(s.cluster.gpu.fp8_tflops, h100->fp8_tflops);  // kept
  EXPECT_DOUBLE_EQ(s.cluster.gpu.hbm_GBps, h100->hbm_GBps);
}

TEST(Cluster, PrecisionMustBeSupported) {
  const GpuSpec* a100 = GpuCatalog::builtin().find("A100-SXM-80GB");
  if (a100 == nullptr || a100->supports(Precision::FP8)) GTEST_SKIP() << "needs an A100 without fp8 in the catalog";
  std::string yaml = edit(kValidScenario, "cluster.gpu", "A100-SXM-80GB");
  EXPECT_SCENARIO_ERROR(edit(yaml, "training.precision", "fp8"), "training.precision", "does not support fp8", "bf16");
}

TEST(Cluster, Bf16OnVoltaSuggestsFp16) {
  const GpuSpec* v100 = GpuCatalog::builtin().find("V100");
  if (v100 == nullptr || v100->supports(Precision::BF16)) GTEST_SKIP() << "needs a V100 without bf16 in the catalog";
  const std::string yaml = edit(kValidScenario, "cluster.gpu", "V100");
  EXPECT_SCENARIO_ERROR(yaml, "training.precision", "does not support bf16", "use training.precision: fp16");
  EXPECT_NO_THROW(parse_scenario(edit(yaml, "training.precision", "fp16"), "test.yaml"));
}

TEST(Cluster, NumGpusMustFillNodes) {
  std::string yaml = edit(kValidScenario, "cluster.num_gpus", "12");
  yaml = edit(yaml, "parallelism.pipeline", "1");
  EXPECT_SCENARIO_ERROR(yaml, "cluster.num_gpus", "num_gpus 12 is not a multiple of gpus_per_node 8");
}

TEST(Cluster, DomainMustAlignWithNodes) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.scale_up.domain_size", "3"), "cluster.scale_up.domain_size",
                        "domain_size 3 must divide gpus_per_node 8");
  // An NVL72-style domain spanning whole nodes is fine (here 2 nodes of 8 share one 16-GPU domain).
  const Scenario s = parse_scenario(edit(kValidScenario, "cluster.scale_up.domain_size", "16"), "test.yaml");
  EXPECT_EQ(s.cluster.scale_up.domain_size, 16);
  EXPECT_EQ(s.cluster.domain_of(15), 0);
}

// A GB200-style cluster: trays of 4 GPUs in NVLink domains of 72, tensor 2 x pipeline 2 x data (derived).
std::string nvl72_job(const char* num_gpus) {
  std::string yaml = edit(kValidScenario, "cluster.gpu", "GB200");
  yaml = edit(yaml, "cluster.gpus_per_node", "4");
  yaml = edit(yaml, "cluster.nics_per_node", "4");
  yaml = edit(yaml, "cluster.scale_up.domain_size", "72");
  yaml = edit(yaml, "training.global_batch_size", num_gpus);  // micro-batch 2 x data (num_gpus / 4) x 2
  return edit(yaml, "cluster.num_gpus", num_gpus);
}

bool inferred(const Scenario& s, const std::string& key) {
  for (const auto& v : s.inferred)
    if (v.key == key) return true;
  return false;
}

TEST(Cluster, JobFillsEachNvl72DomainEvenlyAsSlurmSegmentsPlaceIt) {
  // 64 trays on 18-tray racks: 4 racks x 16 trays (the largest divisor of 64 up to 18), not 18+18+18+10.
  const Scenario s = parse_scenario(nvl72_job("256"), "test.yaml");
  EXPECT_EQ(s.cluster.scale_up.hardware_domain_size, 72);
  EXPECT_EQ(s.cluster.scale_up.domain_size, 64);
  EXPECT_EQ(s.cluster.domain_of(63), 0);
  EXPECT_EQ(s.cluster.domain_of(64), 1);
  EXPECT_TRUE(inferred(s, "cluster.scale_up.job_gpus_per_domain"));  // the report says what auto chose
  // 25 trays: 5 racks of 5 trays, the even split a segment gives.
  EXPECT_EQ(parse_scenario(nvl72_job("100"), "test.yaml").cluster.scale_up.domain_size, 20);
}

TEST(Cluster, JobThatFillsWholeDomainsOrFitsInOneKeepsTheHardwareDomain) {
  for (const char* gpus : {"16", "72", "144"}) {
    const Scenario s = parse_scenario(nvl72_job(gpus), "test.yaml");
    EXPECT_EQ(s.cluster.scale_up.domain_size, 72) << gpus << " GPUs";
    EXPECT_FALSE(inferred(s, "cluster.scale_up.job_gpus_per_domain")) << gpus << " GPUs";
  }
}

TEST(Cluster, JobGpusPerDomainGivenFillsDomainsInTurn) {
  const Scenario full =
      parse_scenario(edit(nvl72_job("256"), "cluster.scale_up.job_gpus_per_domain", "72"), "test.yaml");
  EXPECT_EQ(full.cluster.scale_up.domain_size, 72);
  EXPECT_EQ(full.cluster.domain_of(71), 0);
  EXPECT_EQ(full.cluster.domain_of(255), 3);  // the last rack holds the remaining 40
  EXPECT_FALSE(inferred(full, "cluster.scale_up.job_gpus_per_domain"));
  const Scenario automatic =
      parse_scenario(edit(nvl72_job("256"), "cluster.scale_up.job_gpus_per_domain", "auto"), "test.yaml");
  EXPECT_EQ(automatic.cluster.scale_up.domain_size, 64);
}

TEST(Cluster, JobGpusPerDomainErrorsNameTheKey) {
  const std::string key = "cluster.scale_up.job_gpus_per_domain";
  EXPECT_SCENARIO_ERROR(edit(nvl72_job("256"), key, "70"), key, "whole number of nodes of 4 GPUs");
  EXPECT_SCENARIO_ERROR(edit(nvl72_job("256"), key, "80"), key, "at most domain_size 72");
  EXPECT_SCENARIO_ERROR(edit(nvl72_job("256"), key, "all"), key, "expected auto or a positive whole number");
  EXPECT_SCENARIO_ERROR(edit(nvl72_job("256"), key, "0"), key);
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, key, "4"), key, "domains that span several nodes");
  EXPECT_EQ(parse_scenario(edit(kValidScenario, key, "8"), "test.yaml").cluster.scale_up.domain_size, 8);
}

TEST(Cluster, OversubscriptionNumberOrList) {
  const Scenario one = parse_scenario(edit(kValidScenario, "cluster.network.oversubscription", "2"), "test.yaml");
  EXPECT_EQ(one.cluster.network.oversubscription, std::vector<double>{2.0});
  std::string yaml = edit(kValidScenario, "cluster.network.tiers", "3");
  yaml = edit(yaml, "cluster.network.oversubscription", "[1, 1, 7]");  // Llama 3's fabric (spec example)
  const Scenario list = parse_scenario(yaml, "test.yaml");
  EXPECT_EQ(list.cluster.network.oversubscription, (std::vector<double>{1, 1, 7}));
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.network.oversubscription", "[1, 1, 7]"),
                        "cluster.network.oversubscription", "3 values for 2 tiers");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.network.oversubscription", "[1, x]"),
                        "cluster.network.oversubscription[1]", "expected a positive number, got 'x'");
}

TEST(Cluster, NetworkKeys) {
  std::string yaml = edit(kValidScenario, "cluster.network",
                          "{topology: fat-tree, tiers: 3, pod_size: 8, switch_radix: 32, link_latency_ns: 100, "
                          "switch_latency_ns: 200}");
  const Scenario s = parse_scenario(yaml, "test.yaml");
  EXPECT_EQ(s.cluster.network.topology, NetworkTopology::FatTree);
  EXPECT_EQ(s.cluster.network.tiers, 3);
  EXPECT_EQ(s.cluster.network.pod_size, 8);
  EXPECT_EQ(s.cluster.network.switch_radix, 32);
  EXPECT_DOUBLE_EQ(s.cluster.network.link_latency_ns, 100);
  EXPECT_DOUBLE_EQ(s.cluster.network.switch_latency_ns, 200);
}

}  // namespace
}  // namespace trainsim
