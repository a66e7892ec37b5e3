// Exit statuses tell the truth: output that could not be written (a full disk, a closed pipe) is an
// error naming the file, on every command and for standard output; `validate` exits 1 when a case
// could not be simulated; the user's mistakes are "error:" and exit 1, a bug in trainsim (a broken
// invariant) is "internal error: ... please report" and exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace {

using namespace trainsim_cli_test;
using ::testing::HasSubstr;
using ::testing::Not;

// /dev/full accepts the open and fails every write with ENOSPC, as a full disk does.
constexpr const char* kFull = "/dev/full";

struct Split {
  int status = -1;
  std::string out, err;
};

// stdout and stderr apart (stdout must stay parseable when an error line follows it).
Split run_split(const std::string& args) {
  const auto err_path =
      std::filesystem::temp_directory_path() /
      ("trainsim_cli_stderr_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  const Result r = run_shell("{ " + std::string(TRAINSIM_BINARY) + " " + args + " 2>" + err_path.string() + "; }");
  std::ifstream in(err_path);
  return {r.status, r.out, std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>())};
}

// trainsim with its standard output sent to `target`; stderr is captured.
Result run_with_stdout(const std::string& args, const std::string& target) {
  return run_shell("{ " + std::string(TRAINSIM_BINARY) + " " + args + " > " + target + "; }");
}

TEST(ExitStatus, AFileOutputThatCannotBeWrittenIsAnErrorNamingIt) {
  const std::pair<std::string, std::string> cases[] = {
      {"run " + kTinyExample + " --csv " + kFull, "--csv"},
      {"run " + kTinyExample + " --trace " + kFull, "--trace"},
      {"run " + kTinyExample + " --set simulation.network_model=flow --links-csv " + kFull, "--links-csv"},
      {"run " + kTinyExample + " --set simulation.network_model=packet --queues-csv " + kFull, "--queues-csv"},
      {"run " + kTinyExample + " --html " + kFull, "--html"},
      {"run " + kTinyExample + " --set output.csv=" + kFull, "output.csv"},
      {"run " + kTinyExample + " --set output.trace=" + kFull, "output.trace"},
      {"topo " + kTinyExample + " --dot " + kFull, "--dot"},
      {"sweep " + kTinyExample + " --vary parallelism.tensor=1,2 --csv " + kFull, "--csv"},
  };
  for (const auto& [args, flag] : cases) {
    const Result r = run_with_stdout(args, "/dev/null");
    EXPECT_EQ(r.status, 1) << args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("error: " + flag + ": error while writing /dev/full")) << args;
  }
}

TEST(ExitStatus, AUserErrorIsErrorAndExitOne) {
  const std::string cases[] = {"run " + kTinyExample + " --set parallelism.tensor=3", "run /nonexistent.yaml",
                               "frobnicate " + kTinyExample};
  for (const std::string& args : cases) {
    const Split r = run_split(args);
    EXPECT_EQ(r.status, 1) << args << "\n" << r.err;
    EXPECT_THAT(r.err, ::testing::StartsWith("error: ")) << args;
    EXPECT_THAT(r.err, Not(HasSubstr("internal error"))) << args;
  }
}

TEST(ExitStatus, ABrokenInvariantIsAnInternalErrorAndExitTwo) {
  // No input can break an invariant (that is what makes it one), so main.cpp has one check that only
  // this test's environment variable fails: the same TRAINSIM_CHECK and InternalError as everywhere.
  const Split r = run_split("run " + kTinyExample);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string cases[] = {"run " + kTinyExample, "presets"};
  for (const std::string& args : cases) {
    const std::string env = "TRAINSIM_TEST_INTERNAL_ERROR=1 ";
    const Result bad = run_shell(env + TRAINSIM_BINARY + " " + args);
    EXPECT_EQ(bad.status, 2) << args << "\n" << bad.out;
    EXPECT_THAT(bad.out, ::testing::StartsWith("internal error: TRAINSIM_TEST_INTERNAL_ERROR is set")) << bad.out;
    EXPECT_THAT(bad.out, HasSubstr("(at src/cli/main.cpp:"));
    EXPECT_THAT(bad.out, HasSubstr("this is a bug in trainsim, please report it with the scenario"));
    EXPECT_THAT(bad.out, Not(HasSubstr("\nerror:")));
  }
}

TEST(ExitStatus, ValidateRecordThatCannotBeWrittenIsAnError) {
  const auto dir = std::filesystem::temp_directory_path() / "trainsim_exit_status_record";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "src-a.yaml") << std::ifstream(kTinyExample).rdbuf()
                                    << "reference:\n  source: test\n  confidence: high\n  iteration_time_s: 0.2\n";
  const Result r = run_with_stdout("validate " + dir.string() + " --record " + kFull, "/dev/null");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--record: error while writing /dev/full"));
}

TEST(ExitStatus, StandardOutputThatCannotBeWrittenIsAnError) {
  const std::string commands[] = {
      "run " + kTinyExample,
      "run " + kTinyExample + " --json",
      "topo " + kTinyExample,
      "topo " + kTinyExample + " --json",
      "nccl-test " + kTinyExample + " -b 1K -e 1M",
      "presets",
      "presets --json",
      "memory " + kTinyExample,
      "ops " + kTinyExample,
      "sweep " + kTinyExample + " --vary parallelism.tensor=1,2",
      "sweep " + kTinyExample + " --vary parallelism.tensor=1,2 --csv -",
      "tune " + kTinyExample + " --space parallelism.pipeline=1 --space parallelism.tensor=1",
  };
  for (const std::string& args : commands) {
    const Result r = run_with_stdout(args, kFull);
    EXPECT_EQ(r.status, 1) << args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("error: cannot write to standard output")) << args;
  }
}

TEST(ExitStatus, AClosedPipeIsAnErrorWhenSigpipeIsIgnored) {
  // With SIGPIPE ignored (as under many process supervisors) a write to a pipe nobody reads fails
  // with EPIPE instead of killing the process. The JSON of 512 GPUs' links is far more than the
  // pipe's buffer, so the writer meets the closed end whether or not `true` has exited yet.
  const std::string cluster = temp_file("exit_status_pipe.yaml",
                                        "cluster: {gpu: H100-SXM, num_gpus: 512, gpus_per_node: 8, nics_per_node: 8, "
                                        "nic_gbps: 400}\n");
  const Result r = run_shell("trap '' PIPE; exec 3>&1; { " + std::string(TRAINSIM_BINARY) + " topo " + cluster +
                             " --json 2>&3; echo \"exit=$?\" >&3; } | true");
  EXPECT_THAT(r.out, HasSubstr("error: cannot write to standard output")) << r.out;
  EXPECT_THAT(r.out, HasSubstr("exit=1")) << r.out;
}

TEST(ExitStatus, ValidateFailsWhenACaseCannotBeSimulatedAfterPrintingEveryRow) {
  const auto dir = std::filesystem::temp_directory_path() / "trainsim_exit_status_validate";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string reference = "reference:\n  source: test\n  confidence: high\n  iteration_time_s: ";
  std::ofstream(dir / "src-a.yaml") << std::ifstream(kTinyExample).rdbuf() << reference << "0.2\n";
  // Simulated 500x faster than "measured": a deviation from the reference is a result, not a failure.
  std::ofstream(dir / "src-far.yaml") << std::ifstream(kTinyExample).rdbuf() << reference << "100\n";
  Split r = run_split("validate " + dir.string() + " --json");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");

  // One case that does not load, one that loads and fails in the simulation (a link fault without
  // the flow model).
  std::ofstream(dir / "src-broken.yaml") << "model: [this is not: a scenario\n";
  std::ofstream(dir / "src-fault.yaml") << std::ifstream(kTinyExample).rdbuf()
                                        << "faults: [{kind: link_down, link: leaf0-spine0, at_s: 1}]\n"
                                        << reference << "0.2\n";
  r = run_split("validate " + dir.string() + " --json");
  EXPECT_EQ(r.status, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // every row is still printed
  ASSERT_EQ(j["cases"].size(), 4u);             // src-a, src-broken, src-far, src-fault
  EXPECT_TRUE(j["cases"][0]["error"].is_null());
  EXPECT_TRUE(j["cases"][1]["error"].is_string());
  EXPECT_TRUE(j["cases"][2]["error"].is_null());
  ASSERT_TRUE(j["cases"][3]["error"].is_string());
  EXPECT_THAT(j["cases"][3]["error"].get<std::string>(), HasSubstr("network_model"));
  EXPECT_THAT(r.err, HasSubstr("error: 2 of 4 cases could not be loaded or simulated"));
  EXPECT_THAT(r.err, HasSubstr("src-broken, src-fault"));
  for (const char* format : {"", " --markdown"}) {
    r = run_split("validate " + dir.string() + format);
    EXPECT_EQ(r.status, 1) << format;
    EXPECT_THAT(r.out, HasSubstr("src-fault")) << format;
  }
}

}  // namespace
