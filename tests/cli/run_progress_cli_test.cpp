// `run --progress` reports on stderr and leaves stdout byte-identical; a run estimated to take
// minutes says so first, with the way to a quick answer.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "background_process.hpp"
#include "cli_support.hpp"

namespace {

using namespace trainsim_cli_test;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

std::string progress_out_path(const std::string& name) {
  return (fs::temp_directory_path() / ("trainsim_progress_" + name)).string();
}

TEST(RunProgressCli, ProgressGoesToStderrAndStdoutIsUnchanged) {
  // 128 micro-batches: ~115,000 events, enough for a progress report midway.
  const std::string args =
      "run " + example("tiny-8-h100.yaml") + " --set training.global_batch_size=1024 --json --no-timing";
  const std::string plain = progress_out_path("plain.json"), watched = progress_out_path("watched.json"),
                    err = progress_out_path("progress.err");
  // In a subshell: run_shell adds 2>&1 to the whole command, which must not undo these redirections.
  const auto apart = [&](const std::string& extra, const std::string& out, const std::string& errors) {
    return run_shell("(" + std::string(TRAINSIM_BINARY) + " " + args + extra + " > " + out + " 2> " + errors + ")")
        .status;
  };
  ASSERT_EQ(apart("", plain, "/dev/null"), 0);
  ASSERT_EQ(apart(" --progress", watched, err), 0);
  EXPECT_EQ(read_file(plain), read_file(watched));
  EXPECT_FALSE(read_file(plain).empty());
  const std::string progress = read_file(err);
  EXPECT_THAT(progress, HasSubstr("simulating "));  // the start, with the ops
  EXPECT_THAT(progress, HasSubstr("% of ops"));     // midway, with the ETA
  EXPECT_THAT(progress, HasSubstr("ETA"));
  EXPECT_THAT(progress, HasSubstr("simulated: "));  // the end
  EXPECT_THAT(progress, Not(HasSubstr("\r")));      // lines, not a terminal's in-place rewrites
  // Without --progress and without a terminal, nothing.
  ASSERT_EQ(apart("", watched, err), 0);
  EXPECT_EQ(read_file(err), "");
}

TEST(RunProgressCli, ARunEstimatedAtMinutesSaysSoFirst) {
  // Llama-3 405B on 16,384 GPUs at flow level with 16x the example's batch: ~8 million transfers
  // (minutes). The note comes right after the workload and the fabric are built; the run is stopped there.
  const std::string err = progress_out_path("note.err");
  fs::remove(err);
  Background job(std::string(TRAINSIM_BINARY) + " run " + example("llama3-405b-16384-h100.yaml") +
                 " --set simulation.network_model=flow --set training.global_batch_size=32768 > /dev/null 2> " + err);
  ASSERT_TRUE(job.started());
  const bool noted = wait_until([&] { return read_file(err).find("note: estimated") != std::string::npos; }, 120);
  const std::string text = read_file(err);
  job.stop();
  ASSERT_TRUE(noted) << text;
  EXPECT_THAT(text, HasSubstr("flows on the fabric"));
  EXPECT_THAT(text, HasSubstr("use simulation.network_model: analytical for a quick answer"));
}

}  // namespace
