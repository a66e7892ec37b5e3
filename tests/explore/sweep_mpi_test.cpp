// The parts of the MPI split that need no launcher: detecting one, sharing points among ranks,
// the serialised outcomes' round trip, and that a plain run leaves MPI alone.
#include <map>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "explore/mpi_split.hpp"
#include "explore/sweep_table.hpp"

#ifdef TRAINSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace trainsim::explore {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::ordered_json;

GetEnv env(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    const auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

TEST(SweepMpi, DetectsLaunchersFromTheirEnvironment) {
  EXPECT_FALSE(detect_launcher(env({})).under_launcher);
  EXPECT_FALSE(detect_launcher(env({{"OMPI_COMM_WORLD_SIZE", ""}})).under_launcher);
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    const LaunchEnvironment l = detect_launcher(env({{var, "2"}}));
    EXPECT_TRUE(l.under_launcher) << var;
    EXPECT_EQ(l.variable, var);
  }
}

TEST(SweepMpi, LaunchedWithoutMpiSupportIsAClearError) {
  const LaunchEnvironment launched{true, "OMPI_COMM_WORLD_SIZE"};
  EXPECT_NO_THROW(require_mpi_if_launched(launched, true));
  EXPECT_NO_THROW(require_mpi_if_launched(LaunchEnvironment{}, false));
  try {
    require_mpi_if_launched(launched, false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("built without MPI"));
    EXPECT_THAT(e.what(), HasSubstr("OMPI_COMM_WORLD_SIZE"));
  }
}

TEST(SweepMpi, RanksTakeEveryNthPointAndTogetherCoverAllOnce) {
  EXPECT_THAT(rank_share(7, 0, 3), ElementsAre(0u, 3u, 6u));
  EXPECT_THAT(rank_share(7, 1, 3), ElementsAre(1u, 4u));
  EXPECT_THAT(rank_share(7, 2, 3), ElementsAre(2u, 5u));
  EXPECT_TRUE(rank_share(2, 3, 4).empty());  // more ranks than points
  std::vector<int> seen(10, 0);
  for (int r = 0; r < 4; ++r)
    for (std::size_t p : rank_share(10, r, 4)) ++seen[p];
  EXPECT_THAT(seen, ::testing::Each(1));
}

TEST(SweepMpi, ThreadsPerRankShareTheCoresAndNeverDropToZero) {
  EXPECT_GE(threads_per_rank(1), 1);
  EXPECT_EQ(threads_per_rank(1 << 20), 1);
  EXPECT_LE(threads_per_rank(2), std::max(1, threads_per_rank(1) / 2 + 1));
}

TEST(SweepMpi, SerialisedOutcomesComeBackIdenticalSoTheCsvIsTheSame) {
  PointOutcome a;
  a.status = PointStatus::Ok;
  a.result = json{{"iteration_time_s", 0.1 + 0.2},
                  {"events", 3594},
                  {"memory", {{"fits", true}, {"peak", 1.0 / 3}}},
                  {"scenario", "x, \"y\""}};
  PointOutcome b;
  b.status = PointStatus::OutOfMemory;
  b.reason = "does not fit: 133.0 GiB, \"really\"";
  const std::vector<PointOutcome> originals = {b, a};
  std::vector<PointOutcome> all(3);
  deserialise_outcomes(serialise_outcomes({2, 0}, originals), all);
  EXPECT_EQ(all[0].status, PointStatus::Ok);
  EXPECT_EQ(all[2].status, PointStatus::OutOfMemory);
  EXPECT_EQ(all[2].reason, b.reason);
  EXPECT_EQ(all[1].status, PointStatus::Failed);  // untouched slot
  all[1] = a;

  const Sweep sweep = make_sweep({"parallelism.tensor=1,2,4"});
  std::stringstream direct, gathered;
  write_sweep_csv(direct, make_sweep_table(sweep, {a, a, b}));
  write_sweep_csv(gathered, make_sweep_table(sweep, all));
  EXPECT_EQ(direct.str(), gathered.str());
}

TEST(SweepMpi, MalformedGatherIsAnError) {
  std::vector<PointOutcome> all(2);
  EXPECT_THROW(deserialise_outcomes("not json", all), Error);
  EXPECT_THROW(deserialise_outcomes(R"([{"index": 5, "status": "ok", "reason": ""}])", all), Error);
  EXPECT_THROW(deserialise_outcomes(R"([{"index": 0, "status": "great", "reason": ""}])", all), Error);
}

TEST(SweepMpi, PlainRunIsOneRankAndNeverInitialisesMpi) {
  const MpiWorld world{LaunchEnvironment{}};
  EXPECT_EQ(world.rank(), 0);
  EXPECT_EQ(world.size(), 1);
  EXPECT_TRUE(world.is_root());
  EXPECT_EQ(world.broadcast_from_root("go"), "go");
  PointOutcome o;
  o.status = PointStatus::Invalid;
  const auto all = world.gather(3, {1}, {o});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1].status, PointStatus::Invalid);
#ifdef TRAINSIM_HAVE_MPI
  int initialised = 1;
  MPI_Initialized(&initialised);
  EXPECT_EQ(initialised, 0);
#endif
}

}  // namespace
}  // namespace trainsim::explore
