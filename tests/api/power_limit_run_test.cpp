// cluster.gpu_power_limit_w end to end: a capped GPU computes slower, draws at most its limit, and the run says
// which clock it used.
#include <gtest/gtest.h>

#include "scenario/scenario_loader.hpp"
#include "support/tiny_scenario.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim {
namespace {

RunResult run_with(const std::string& extra) {
  return run_scenario(parse_scenario(std::string(test::kTinyScenario) + extra, "tiny.yaml")).result;
}

TEST(PowerLimitRun, ACappedGpuComputesSlowerAndDrawsAtMostItsLimit) {
  const RunResult rated = run_with("");
  const RunResult capped = run_with("  gpu_power_limit_w: 500\n");
  // The tensor kernels run at (1311 / 1580)^0.67 = 0.883 of their rated-power speed; memory-bound kernels and
  // communication do not slow, so the step slows by less than the tensor kernels do.
  const double ratio = capped.breakdown.compute / rated.breakdown.compute;
  EXPECT_GT(ratio, 1.02);
  EXPECT_LT(ratio, 1.0 / 0.883 + 1e-9);
  EXPECT_GT(capped.iteration_time_s, rated.iteration_time_s);
  ASSERT_TRUE(rated.energy && capped.energy);
  EXPECT_GT(rated.energy->gpu_compute_w, 500);
  EXPECT_LE(capped.energy->gpu_compute_w, 500);
  EXPECT_LE(capped.energy->gpu_average_w, 500);
  EXPECT_NE(capped.energy->basis.find("500 W power limit"), std::string::npos) << capped.energy->basis;
  EXPECT_NE(capped.simulation.compute_model.find("at the 500 W power limit"), std::string::npos)
      << capped.simulation.compute_model;
  EXPECT_EQ(rated.simulation.compute_model.find("power limit"), std::string::npos);
}

TEST(PowerLimitRun, AnEnergyGivenInThePowerBlockStandsUnderALimit) {
  const RunResult r = run_with("  gpu_power_limit_w: 500\npower:\n  gpu_compute_w: 520\n");
  ASSERT_TRUE(r.energy);
  EXPECT_DOUBLE_EQ(r.energy->gpu_compute_w, 520);
}

}  // namespace
}  // namespace trainsim
