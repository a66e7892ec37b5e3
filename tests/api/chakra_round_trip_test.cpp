// trainsim -> Chakra -> trainsim: the iteration simulated from the exported traces takes the time the scenario's
// own simulation took (the bar: within 1%; the traces carry each kernel's simulated duration to the
// picosecond, so it is exact here), with one trace per simulated rank and with every rank.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "support/examples.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using test::example;

double chakra_round_trip_error(const Scenario& s, bool per_rank) {
  const fs::path dir = fs::temp_directory_path() / ("trainsim-chakra-api-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  RunOptions plain;
  plain.per_rank = per_rank;
  const double t0 = run_scenario(s, plain).result.iteration_time_s;
  export_workload(s, "chakra", dir.string(), per_rank);
  RunOptions imported;
  imported.workload_file = dir.string();
  const double t1 = run_scenario(s, imported).result.iteration_time_s;
  fs::remove_all(dir);
  return std::abs(t1 - t0) / t0;
}

class ChakraRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(ChakraRoundTrip, SameIterationTime) {
  const Scenario s = load_scenario(example(GetParam()));
  EXPECT_LT(chakra_round_trip_error(s, false), 1e-9);
}

// The examples that simulate in seconds on a CI machine: TP+SP with DP, pipeline with DP, MoE with EP; the others
// are measured in docs/chakra.md.
INSTANTIATE_TEST_SUITE_P(Examples, ChakraRoundTrip,
                         ::testing::Values("tiny-8-h100.yaml", "gpt3-13b-128-a100.yaml", "mixtral-8x7b-64-h100.yaml"));

TEST(ChakraRoundTripPerRank, EveryRankTraced) {
  const Scenario s = load_scenario(example("tiny-8-h100.yaml"));
  EXPECT_LT(chakra_round_trip_error(s, true), 1e-9);
}

// The flow-level network runs the imported collectives on the fabric like the generated ones.
TEST(ChakraRoundTripFlow, FlowLevelNetwork) {
  const Scenario s = load_scenario(example("tiny-8-h100.yaml"), {"simulation.network_model=flow"});
  EXPECT_LT(chakra_round_trip_error(s, false), 1e-9);
}

TEST(ChakraExport, UnknownFormatNamesTheKnownOnes) {
  const Scenario s = load_scenario(example("tiny-8-h100.yaml"));
  try {
    export_workload(s, "astra", "/tmp/unused");
    FAIL() << "no error";
  } catch (const Error& e) { EXPECT_THAT(e.what(), HasSubstr("--format astra: unknown; known formats: aicb, chakra")); }
}

}  // namespace
}  // namespace trainsim
