// TRAINSIM_CHECK: a broken invariant is an InternalError carrying the file:line of the check, the
// failed condition and the message; it is not a trainsim::Error, so no handler of user errors catches
// it, and the message is only built when the check fails.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/check.hpp"
#include "core/error.hpp"

namespace trainsim {
namespace {

using ::testing::HasSubstr;

int check_positive(int x) {
  TRAINSIM_CHECK(x > 0, "x is " + std::to_string(x));
  return x;
}

TEST(Check, PassingCheckDoesNothing) { EXPECT_EQ(check_positive(3), 3); }

TEST(Check, FailingCheckThrowsInternalErrorWithWhereWhatAndCondition) {
  const int line = __LINE__ + 2;  // the line of the check inside the lambda below
  try {
    [] { TRAINSIM_CHECK(1 + 1 == 3, std::string("arithmetic is broken: ") + "1 + 1 = 2"); }();
    FAIL() << "no exception";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), HasSubstr("arithmetic is broken: 1 + 1 = 2"));
    EXPECT_THAT(e.what(), HasSubstr("1 + 1 == 3"));  // the condition's text
    EXPECT_THAT(e.file(), HasSubstr("tests/core/check_test.cpp"));
    EXPECT_EQ(e.line(), line);
    EXPECT_EQ(e.where(), e.file() + ":" + std::to_string(line));
  }
}

TEST(Check, InternalErrorIsNotAUserError) {
  bool caught_as_user_error = false, caught_as_internal = false;
  try {
    check_positive(-1);
  } catch (const Error&) { caught_as_user_error = true; } catch (const InternalError& e) {
    caught_as_internal = true;
    EXPECT_THAT(e.what(), HasSubstr("x is -1"));
  }
  EXPECT_FALSE(caught_as_user_error);
  EXPECT_TRUE(caught_as_internal);
}

TEST(Check, TheMessageIsBuiltOnlyWhenTheCheckFails) {
  int built = 0;
  auto message = [&] {
    ++built;
    return std::string("costly");
  };
  TRAINSIM_CHECK(true, message());
  EXPECT_EQ(built, 0);
  EXPECT_THROW(TRAINSIM_CHECK(false, message()), InternalError);
  EXPECT_EQ(built, 1);
}

TEST(Check, UnreachableAlwaysThrows) {
  auto pick = [](int k) -> int {
    switch (k) {
      case 0: return 10;
    }
    TRAINSIM_UNREACHABLE("k = " + std::to_string(k));
  };
  EXPECT_EQ(pick(0), 10);
  EXPECT_THROW(pick(1), InternalError);
}

// The CLI's line: what, where, and that it is a bug to report, never "error:" alone.
TEST(Check, ReportLineSaysItIsABugToReport) {
  const InternalError e("queue went backwards", "/home/someone/trainsim/src/engine/engine.cpp", 42);
  EXPECT_EQ(e.file(), "src/engine/engine.cpp");  // from the source tree's src/ on
  EXPECT_EQ(internal_error_message(e),
            "internal error: queue went backwards (at src/engine/engine.cpp:42) — this is a bug in trainsim, please "
            "report it with the scenario");
}

}  // namespace
}  // namespace trainsim
