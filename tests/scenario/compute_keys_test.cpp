// The `compute:` block: where kernel times come from (docs/op-database.md).
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

TEST(ComputeKeys, AbsentMeansTheRooflineModel) {
  const Scenario s = parse_scenario(kValidScenario, "test.yaml");
  EXPECT_FALSE(s.compute.database.has_value());
  EXPECT_FALSE(s.compute.scale_from.has_value());
}

TEST(ComputeKeys, DatabasePathIsResolvedNextToTheScenario) {
  const std::string yaml = edit(kValidScenario, "compute.database", "ops/h100.csv");
  EXPECT_EQ(*parse_scenario(yaml, "/data/runs/job.yaml").compute.database, "/data/runs/ops/h100.csv");
  EXPECT_EQ(*parse_scenario(edit(kValidScenario, "compute.database", "/abs/db.csv"), "/data/job.yaml").compute.database,
            "/abs/db.csv");
}

TEST(ComputeKeys, ScaleFromNamesACatalogGpu) {
  std::string yaml = edit(kValidScenario, "compute.database", "a100.csv");
  yaml = edit(yaml, "compute.scale_from", "A100-SXM-80GB");
  const Scenario s = parse_scenario(yaml, "test.yaml");
  ASSERT_TRUE(s.compute.scale_from.has_value());
  EXPECT_EQ(s.compute.scale_from->name, "A100-SXM-80GB");
  EXPECT_SCENARIO_ERROR(edit(yaml, "compute.scale_from", "A100-SXM-80"), "compute.scale_from",
                        "unknown GPU 'A100-SXM-80'", "did you mean");
}

TEST(ComputeKeys, BadValuesNameTheKey) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "compute.database", "''"), "compute.database", "empty string");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "compute.scale_from", "A100-SXM-80GB"), "compute.scale_from",
                        "no compute.database is given");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "compute.databse", "x.csv"), "compute.databse", "database");
}

}  // namespace
}  // namespace trainsim
