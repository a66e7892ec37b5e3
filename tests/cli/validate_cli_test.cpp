// `trainsim validate` end to end: a case that cannot be loaded is a failed row and the run goes on;
// --record writes the per-group record and --check compares with it (the CI accuracy check); the
// output is the same bytes run to run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace {

using namespace trainsim_cli_test;
using ::testing::HasSubstr;

// A directory with one tiny case per name (iteration time measured as 0.2 s).
std::filesystem::path case_dir(const std::string& dir_name, const std::vector<std::string>& names) {
  const auto dir = std::filesystem::temp_directory_path() / dir_name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string text = read_file(example("tiny-8-h100.yaml"));
  for (const auto& name : names)
    std::ofstream(dir / (name + ".yaml"))
        << text << "reference:\n  source: test\n  confidence: high\n  iteration_time_s: 0.2\n";
  return dir;
}

// Exit status 1 (a case failed), stdout only: the table is still complete.
Result run_validate_stdout(const std::string& args) {
  return run_shell("{ " + std::string(TRAINSIM_BINARY) + " validate " + args + " 2>/dev/null; }");
}

TEST(ValidateCli, UnloadableCaseIsAFailedRowAndTheRunGoesOn) {
  const auto dir = case_dir("trainsim_validate_failed_row", {"src-a"});
  std::ofstream(dir / "src-broken.yaml") << "model: [this is not: a scenario\n";
  const Result r = run_validate_stdout(dir.string() + " --json");
  ASSERT_EQ(r.status, 1) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["cases"].size(), 2u);
  EXPECT_EQ(j["cases"][0]["name"], "src-a");
  EXPECT_TRUE(j["cases"][0]["error"].is_null());
  EXPECT_EQ(j["cases"][0]["generation"], "hopper");
  EXPECT_EQ(j["cases"][1]["name"], "src-broken");
  EXPECT_TRUE(j["cases"][1]["error"].is_string());
  EXPECT_EQ(j["summary"]["by_group"]["src"]["failed"], 1);
  EXPECT_EQ(j["summary"]["by_group"]["src"]["simulated"], 1);
  EXPECT_EQ(j["summary"]["by_generation"]["hopper"]["cases"], 1);

  const Result md = run_validate_stdout(dir.string() + " --markdown");
  ASSERT_EQ(md.status, 1) << md.out;
  EXPECT_THAT(md.out, HasSubstr("## Cases that could not be simulated"));
  EXPECT_THAT(md.out, HasSubstr("| src-broken | src |"));
}

// A measured run that trainsim's memory model says does not fit is simulated (exit 0) and listed apart with what it
// needs: here the tiny job on a GPU given 2 GiB.
TEST(ValidateCli, ACaseOverTheMemoryModelIsSimulatedAndListedApart) {
  const auto dir = case_dir("trainsim_validate_over_memory", {"src-fits", "src-small"});
  std::string small = read_file((dir / "src-small.yaml").string());
  const std::string gpu_line = "  gpu: H100-SXM\n";
  ASSERT_NE(small.find(gpu_line), std::string::npos);
  small.replace(small.find(gpu_line), gpu_line.size(), gpu_line + "  gpu_spec: {memory_gib: 2}\n");
  std::ofstream(dir / "src-small.yaml") << small;
  const Result r = run_validate_stdout(dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out,
              ::testing::ContainsRegex("Over trainsim's memory model, simulated anyway \\(the measured runs fit\\) "
                                       "\\(1\\):\n  src-small \\(H100-SXM\\): needs [0-9.]+ GiB per GPU of 2\\.0\n"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("src-fits (H100-SXM): needs")));
  const auto j = nlohmann::json::parse(run_validate_stdout(dir.string() + " --json").out);
  EXPECT_TRUE(j["cases"][0]["over_memory"].is_null());
  EXPECT_GT(j["cases"][1]["over_memory"]["needed_gib"].get<double>(), 2.0);
}

TEST(ValidateCli, RecordThenCheckPassesAndARegressionFails) {
  const auto dir = case_dir("trainsim_validate_record", {"src-a", "src-b"});
  const auto record = std::filesystem::temp_directory_path() / "trainsim_validate_record.json";
  const Result r = run("validate " + dir.string() + " --markdown --record " + record.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("# Accuracy"));  // --record keeps the chosen output
  auto j = nlohmann::json::parse(read_file(record));
  EXPECT_EQ(j["groups"]["src"]["cases"], 2);
  EXPECT_EQ(j["failed_cases"], nlohmann::json::array());

  Result check = run("validate " + dir.string() + " --check " + record.string());
  EXPECT_EQ(check.status, 0) << check.out;
  EXPECT_THAT(check.out, HasSubstr("accuracy check: passed"));
  EXPECT_THAT(check.out, ::testing::ContainsRegex("\nsrc +2 +0 "));

  // Pretend the recorded median was 1.5 points better than now: the check must fail.
  const double now = j["groups"]["src"]["median_abs_error"].get<double>();
  j["groups"]["src"]["median_abs_error"] = now - 0.015;
  std::ofstream(record) << j.dump(2);
  check = run("validate " + dir.string() + " --check " + record.string());
  EXPECT_EQ(check.status, 1) << check.out;
  EXPECT_THAT(check.out, HasSubstr("src regressed by 1.50 points"));
  // ... unless the tolerance allows it.
  check = run("validate " + dir.string() + " --check " + record.string() + " --tolerance 2");
  EXPECT_EQ(check.status, 0) << check.out;

  // A recorded group that is gone fails; so does a case that newly fails to simulate.
  j["groups"]["src"]["median_abs_error"] = now;
  j["groups"]["other"] = j["groups"]["src"];
  std::ofstream(record) << j.dump(2);
  check = run("validate " + dir.string() + " --check " + record.string());
  EXPECT_EQ(check.status, 1) << check.out;
  EXPECT_THAT(check.out, HasSubstr("group other is gone"));

  j["groups"].erase("other");
  std::ofstream(record) << j.dump(2);
  std::ofstream(dir / "src-broken.yaml") << "not: [a scenario\n";
  check = run("validate " + dir.string() + " --check " + record.string());
  EXPECT_EQ(check.status, 1) << check.out;
  EXPECT_THAT(check.out, HasSubstr("newly failing to simulate: src-broken"));
}

TEST(ValidateCli, CheckWithoutARecordIsAnError) {
  const auto dir = case_dir("trainsim_validate_norecord", {"src-a"});
  const Result r = run("validate " + dir.string() + " --check /nonexistent/groups-recorded.json");
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("make accuracy"));
}

TEST(ValidateCli, OutputIsTheSameBytesRunToRun) {
  const auto dir = case_dir("trainsim_validate_determinism", {"src-a", "src-b", "other-c"});
  for (const char* flags : {"", " --markdown", " --json"}) {
    const Result a = run("validate " + dir.string() + flags);
    const Result b = run("validate " + dir.string() + flags);
    ASSERT_EQ(a.status, 0) << a.out;
    EXPECT_EQ(a.out, b.out) << flags;
    EXPECT_THAT(a.out, ::testing::Not(HasSubstr("wall_s"))) << flags;
  }
}

}  // namespace
