// run_nccl_test hands each row over as soon as it is computed (the CLI prints it then, as nccl-tests
// does), and refuses before computing anything a step that does not advance or a table too long.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim {
namespace {

Scenario tiny() { return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/tiny-8-h100.yaml"); }

TEST(NcclTestRows, EachRowIsHandedOverInOrderWithTheTableSoFar) {
  NcclTestOptions o;
  o.min_bytes = 8;
  o.max_bytes = 1 << 20;
  o.factor = 4;
  std::vector<std::int64_t> seen;
  const NcclTestTable table = run_nccl_test(tiny(), o, [&](const NcclTestTable& so_far) {
    EXPECT_EQ(so_far.rows.size(), seen.size() + 1);
    EXPECT_EQ(so_far.gpus, 8);  // the header's fields are there from the first row
    seen.push_back(so_far.rows.back().size_bytes);
  });
  ASSERT_EQ(seen.size(), table.rows.size());
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], table.rows[i].size_bytes);
}

TEST(NcclTestRows, StepsThatDoNotAdvanceOrGiveTooManyRowsAreRefusedBeforeAnyRow) {
  NcclTestOptions o;
  o.min_bytes = 8;
  o.max_bytes = std::int64_t{1} << 30;
  o.increment = 1;
  int rows = 0;
  const auto count = [&](const NcclTestTable&) { ++rows; };
  try {
    run_nccl_test(tiny(), o, count);
    ADD_FAILURE() << "not refused";
  } catch (const ScenarioError& e) { EXPECT_EQ(e.key(), "-i"); }
  o.increment = 0;
  o.factor = 1.001;
  try {
    run_nccl_test(tiny(), o, count);
    ADD_FAILURE() << "not refused";
  } catch (const ScenarioError& e) { EXPECT_EQ(e.key(), "-f"); }
  EXPECT_EQ(rows, 0);
  // Exactly the limit is allowed: 0 .. 9999 by 1.
  o.min_bytes = 0;
  o.max_bytes = kMaxNcclTestRows - 1;
  o.increment = 1;
  EXPECT_EQ(static_cast<std::int64_t>(run_nccl_test(tiny(), o).rows.size()), kMaxNcclTestRows);
}

}  // namespace
}  // namespace trainsim
