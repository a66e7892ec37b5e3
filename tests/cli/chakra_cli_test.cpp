// `trainsim export --format chakra` and `trainsim run --workload`: the checked-in traces of examples/chakra run
// and give the example's iteration time; export then import from the command line; errors name the file and the
// node, exit status 1.
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using trainsim_cli_test::example;
using trainsim_cli_test::run;

double iteration_time(const std::string& args) {
  const auto r = run(args + " --json --no-timing");
  EXPECT_EQ(r.status, 0) << r.out;
  const auto start = r.out.find('{');
  if (start == std::string::npos) return -1;
  return nlohmann::json::parse(r.out.substr(start)).at("iteration_time_s").get<double>();
}

// The example traces in the repository (examples/chakra/README.md says how they were written) still run, and
// still give the time the scenario gives.
TEST(ChakraCli, ExampleTracesRun) {
  const std::string s = example("tiny-8-h100.yaml") + " --set training.global_batch_size=8";
  const double generated = iteration_time("run " + s);
  const double imported = iteration_time("run " + s + " --workload " + example("chakra/tiny-8-h100"));
  EXPECT_NEAR(imported / generated, 1.0, 0.01);
}

TEST(ChakraCli, ExportThenRun) {
  const fs::path dir = fs::temp_directory_path() / ("trainsim-chakra-cli-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto e = run("export " + example("tiny-8-h100.yaml") + " --format chakra -o " + dir.string() +
                     " --per-rank --set training.global_batch_size=16");
  ASSERT_EQ(e.status, 0) << e.out;
  for (int r = 0; r < 8; ++r) EXPECT_TRUE(fs::exists(dir / ("trainsim." + std::to_string(r) + ".et"))) << r;
  EXPECT_TRUE(fs::exists(dir / "comm_group.json"));
  const std::string s = example("tiny-8-h100.yaml") + " --set training.global_batch_size=16";
  EXPECT_DOUBLE_EQ(iteration_time("run " + s + " --workload " + dir.string()), iteration_time("run " + s));
  fs::remove_all(dir);
}

TEST(ChakraCli, Errors) {
  const auto unknown = run("export " + example("tiny-8-h100.yaml") + " --format ns3 -o /tmp/x");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_THAT(unknown.out, HasSubstr("error: --format ns3: unknown; known formats: aicb, chakra"));
  const auto missing = run("run " + example("tiny-8-h100.yaml") + " --workload /nonexistent/traces");
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.out, HasSubstr("/nonexistent/traces: no such file or directory"));
  const fs::path dir = fs::temp_directory_path() / ("trainsim-chakra-bad-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "t.0.et", std::ios::binary) << std::string("\x00\x05\x08", 3);
  const auto bad = run("run " + example("tiny-8-h100.yaml") + " --workload " + dir.string());
  EXPECT_EQ(bad.status, 1);
  EXPECT_THAT(bad.out, HasSubstr("t.0.et: node 0: the message at byte 1 claims 5 bytes, only 1 are left"));
  fs::remove_all(dir);
}

}  // namespace
