// run_in_parallel: every task runs once whatever the thread count, and the error a caller sees is the lowest task's,
// as on one thread.
#include "core/parallel.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace trainsim {
namespace {

TEST(RunInParallel, EveryTaskRunsOnceOnAnyThreadCount) {
  for (const int threads : {1, 2, 7, 64}) {
    std::vector<int> runs(100, 0);
    run_in_parallel(runs.size(), threads, [&](std::size_t i) { ++runs[i]; });
    for (std::size_t i = 0; i < runs.size(); ++i)
      EXPECT_EQ(runs[i], 1) << "task " << i << ", " << threads << " threads";
  }
  run_in_parallel(0, 4, [](std::size_t) { FAIL() << "no task to run"; });
}

TEST(RunInParallel, TheLowestFailingTasksErrorIsRethrownAfterAllRan) {
  for (const int threads : {1, 4}) {
    std::vector<int> runs(50, 0);
    try {
      run_in_parallel(runs.size(), threads, [&](std::size_t i) {
        ++runs[i];
        if (i == 31 || i == 17 || i == 40) throw std::runtime_error("task " + std::to_string(i));
      });
      FAIL() << "no error from " << threads << " threads";
    } catch (const std::runtime_error& e) { EXPECT_STREQ(e.what(), "task 17"); }
    if (threads > 1) {  // a sequential loop stops at the first error; threads finish every task first
      for (std::size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i], 1) << "task " << i;
    }
  }
}

TEST(RunInParallel, ZeroThreadsMeansEveryCore) {
  EXPECT_EQ(resolve_thread_count(3), 3);
  EXPECT_GE(resolve_thread_count(0), 1);
}

}  // namespace
}  // namespace trainsim
