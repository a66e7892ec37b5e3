// Rates and times outside physics are refused at the scenario layer with the key: a NIC of 1e-6 Gb/s used to
// be simulated as a deadlock (flow level) or a flat 34.8 s (analytical), and a fault at 1e300 s overflowed the
// picosecond clock.
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

TEST(PhysicalBounds, NicBelowOneGigabitIsRefused) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.nic_gbps", "0.000001"), "cluster.nic_gbps",
                        "expected at least 1 Gb/s", "got 1e-06");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.nic_gbps", "0.5"), "cluster.nic_gbps", "at least 1 Gb/s");
  EXPECT_DOUBLE_EQ(parse_scenario(edit(kValidScenario, "cluster.nic_gbps", "1"), "test.yaml").cluster.nic_gbps, 1.0);
}

TEST(PhysicalBounds, LinkRatesBelowOneGigabytePerSecondAreRefused) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.scale_up.bandwidth_GBps", "0.01"),
                        "cluster.scale_up.bandwidth_GBps", "expected at least 1 GB/s");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.network.pcie_GBps", "0.5"), "cluster.network.pcie_GBps",
                        "expected at least 1 GB/s");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "algorithms.reduction_server.nic_gbps", "0.1"),
                        "algorithms.reduction_server.nic_gbps", "expected at least 1 Gb/s");
  EXPECT_NO_THROW(parse_scenario(edit(kValidScenario, "cluster.scale_up.bandwidth_GBps", "1"), "test.yaml"));
}

TEST(PhysicalBounds, GpuSpecRatesAreBounded) {
  const std::string base = edit(kValidScenario, "cluster.gpu", nullptr);
  EXPECT_SCENARIO_ERROR(
      edit(base, "cluster.gpu_spec", "{peak_tflops: {bf16: 1000}, hbm_GBps: 3, memory_gib: 80, scale_up_GBps: 450}"),
      "cluster.gpu_spec.hbm_GBps", "expected at least 10 GB/s");
  EXPECT_SCENARIO_ERROR(edit(base, "cluster.gpu_spec",
                             "{peak_tflops: {bf16: 0.001}, hbm_GBps: 3000, memory_gib: 80, scale_up_GBps: 450}"),
                        "cluster.gpu_spec.peak_tflops.bf16", "expected at least 0.1 TFLOP/s");
  EXPECT_SCENARIO_ERROR(
      edit(base, "cluster.gpu_spec", "{peak_tflops: {bf16: 1000}, hbm_GBps: 3000, memory_gib: 80, scale_up_GBps: 0.2}"),
      "cluster.gpu_spec.scale_up_GBps", "expected at least 1 GB/s");
}

TEST(PhysicalBounds, OversubscriptionBeyondOneHundredIsRefused) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.network.oversubscription", "1000"),
                        "cluster.network.oversubscription", "expected at most 100");
  std::string three = edit(kValidScenario, "cluster.network.tiers", "3");
  EXPECT_SCENARIO_ERROR(edit(three, "cluster.network.oversubscription", "[1, 1e6]"),
                        "cluster.network.oversubscription[1]", "expected at most 100");
  EXPECT_NO_THROW(parse_scenario(edit(three, "cluster.network.oversubscription", "[1, 1, 7]"), "test.yaml"));
}

TEST(PhysicalBounds, TimesBeyondAMillionSecondsAreRefused) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "faults", "[{kind: link_down, link: a-b, at_s: 1e300}]"), "faults[0].at_s",
                        "expected at most 1e+06 s", "got 1e+300");
  EXPECT_NO_THROW(
      parse_scenario(edit(kValidScenario, "faults", "[{kind: link_down, link: a-b, at_s: 1e6}]"), "test.yaml"));
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.network.link_latency_ns", "1e18"),
                        "cluster.network.link_latency_ns", "expected at most 1e+15");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.network.switch_latency_ns", "1e16"),
                        "cluster.network.switch_latency_ns", "expected at most 1e+15");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "algorithms.reduction_server.latency_us", "1e13"),
                        "algorithms.reduction_server.latency_us", "expected at most 1e+12");
}

// A degraded link or slow GPU keeps at least 0.1% of its speed; below that it is dead (link_down etc.).
TEST(PhysicalBounds, FaultFactorBelowOneThousandthIsRefused) {
  EXPECT_SCENARIO_ERROR(
      edit(kValidScenario, "faults", "[{kind: link_degraded, link: a-b, factor: 1e-9, always: true}]"),
      "faults[0].factor", "at least 0.001", "link_down");
  EXPECT_NO_THROW(parse_scenario(
      edit(kValidScenario, "faults", "[{kind: gpu_slow, rank: 1, factor: 0.001, always: true}]"), "test.yaml"));
}

}  // namespace
}  // namespace trainsim
