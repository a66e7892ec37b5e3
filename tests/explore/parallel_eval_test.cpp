// Evaluating many points: outcomes come back in the order of the requested indices whatever the
// thread count, and a bad index is an error before any worker starts (not a crash in a thread).
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "explore/parallel_eval.hpp"
#include "tune_test_scenarios.hpp"

namespace trainsim::explore {
namespace {

TEST(ParallelEval, OutcomesFollowTheRequestedIndicesWhateverTheThreadCount) {
  const std::string path = tune_test::write_scenario("parallel_eval", tune_test::tiny_scenario_text(80.0));
  const std::vector<Overrides> points = {
      {"parallelism.tensor=1", "parallelism.pipeline=1", "parallelism.data=8"},
      {"parallelism.tensor=2", "parallelism.pipeline=2", "parallelism.data=2"},
      {"parallelism.tensor=3", "parallelism.pipeline=1", "parallelism.data=null"},  // 3 does not divide 8 GPUs
      {"parallelism.tensor=4", "parallelism.pipeline=1", "parallelism.data=2"},
  };
  const std::vector<std::size_t> order = {3, 2, 0, 1};
  const auto one = evaluate_points(path, points, order, 1);
  const auto three = evaluate_points(path, points, order, 3);
  ASSERT_EQ(one.size(), order.size());
  for (std::size_t j = 0; j < order.size(); ++j) {
    EXPECT_EQ(one[j].status, three[j].status) << j;
    EXPECT_EQ(one[j].result.dump(), three[j].result.dump()) << j;
    const PointOutcome single = evaluate_point(path, points[order[j]]);
    EXPECT_EQ(one[j].status, single.status) << j;
    EXPECT_EQ(one[j].result.dump(), single.result.dump()) << j;
  }
  EXPECT_EQ(one[1].status, PointStatus::Invalid);
  EXPECT_NE(one[1].reason.find("cluster.num_gpus"), std::string::npos) << one[1].reason;  // 8 GPUs, TP 3
  EXPECT_EQ(one[0].status, PointStatus::Ok);
}

TEST(ParallelEval, AnIndexBeyondThePointsIsAnError) {
  const std::vector<Overrides> points = {{}};
  EXPECT_THROW(evaluate_points("unused.yaml", points, {0, 1}, 2), Error);
}

}  // namespace
}  // namespace trainsim::explore
