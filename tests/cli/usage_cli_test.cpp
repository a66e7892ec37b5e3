// The command line itself: --version, an unknown command named as such, every accepted flag and
// value used (an empty --set value, --trace-ranks without a trace, --threads out of bounds are
// errors naming the flag), presets as JSON, and suggestions for misspelt names.
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

std::string project_version() {
  // The version CMake's project() gives, read from the source so the test follows a bump.
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/CMakeLists.txt");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t at = text.find("project(trainsim VERSION ");
  if (at == std::string::npos) return "?";
  const std::size_t from = at + std::string("project(trainsim VERSION ").size();
  return text.substr(from, text.find_first_of(" )", from) - from);
}

TEST(Usage, VersionPrintsTheProjectVersion) {
  const Result r = run("--version");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "trainsim " + project_version() + "\n");
  // Printed to a full disk, it was not printed.
  const Result full = run_shell("{ " + std::string(TRAINSIM_BINARY) + " --version > /dev/full; }");
  EXPECT_EQ(full.status, 1) << full.out;
  EXPECT_THAT(full.out, HasSubstr("cannot write to standard output"));
}

TEST(Usage, AnUnknownCommandIsNamedWithTheCommands) {
  Result r = run("frobnicate " + kTinyExample);
  EXPECT_EQ(r.status, 1) << r.out;  // a usage error like any other; 2 means a bug in trainsim
  EXPECT_THAT(r.out,
              HasSubstr("error: unknown command 'frobnicate'; commands: run, validate, presets, nccl-test, topo, "
                        "memory, ops, sweep, tune"));
  EXPECT_THAT(r.out, Not(HasSubstr("subcommand is required")));
  r = run("rnu " + kTinyExample);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("unknown command 'rnu' (did you mean run?)"));
  // No command at all is still CLI11's "a subcommand is required".
  r = run("");
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("subcommand is required"));
}

TEST(Usage, AnEmptySetValueIsAnErrorNotTheDefault) {
  const Result r = run("run " + kTinyExample + " --set parallelism.tensor=");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("error: --set: parallelism.tensor: empty value in 'parallelism.tensor='"));
}

TEST(Usage, ABadSetValueIsBlamedOnTheSetNotTheFile) {
  Result r = run("run " + kTinyExample + " --set parallelism.tensor=abc");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("error: --set parallelism.tensor=abc: parallelism.tensor: expected a positive integer"));
  EXPECT_THAT(r.out, Not(HasSubstr(kTinyExample)));
  // The misspelt GPU id's suggestion reads look-alike letters as the digits they stand for.
  r = run("memory " + kTinyExample + " --set cluster.gpu=H1OO");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out,
              HasSubstr("error: --set cluster.gpu=H1OO: cluster.gpu: unknown GPU 'H1OO'; did you mean H100-SXM?"));
}

TEST(Usage, TraceRanksWithoutATraceIsAnError) {
  Result r = run("run " + kTinyExample + " --trace-ranks 0,1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--trace-ranks"));
  EXPECT_THAT(r.out, HasSubstr("add --trace FILE"));
  // A trace the scenario asks for (output.trace) is a trace.
  const std::string trace = (std::filesystem::temp_directory_path() / "trainsim_usage_trace.json").string();
  r = run("run " + kTinyExample + " --trace-ranks 0 --set output.trace=" + trace);
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(Usage, ThreadsOutOfBoundsIsAnErrorNamingTheFlag) {
  for (const char* value : {"-1", "1025", "many"}) {
    for (const std::string& args :
         {"sweep " + kTinyExample + " --vary parallelism.tensor=1,2 --threads " + std::string(value),
          "tune " + kTinyExample + " --threads " + std::string(value),
          "validate " + kTinyExample + " --threads " + std::string(value)}) {
      const Result r = run(args);
      EXPECT_NE(r.status, 0) << args;
      EXPECT_THAT(r.out, HasSubstr("--threads: expected 0 (all cores) or a number of threads from 1 to 1024, got '" +
                                   std::string(value) + "'"))
          << args << "\n"
          << r.out;
    }
  }
  // The bound itself is accepted.
  const Result r = run("sweep " + kTinyExample + " --vary parallelism.tensor=1,2 --threads 1024 --csv -");
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(Usage, ValidateToleranceMustBeANonNegativeNumber) {
  for (const char* value : {"-1", "nan", "x"}) {
    const Result r = run("validate " + kTinyExample + " --check /nonexistent.json --tolerance " + value);
    EXPECT_NE(r.status, 0) << value;
    EXPECT_THAT(r.out,
                HasSubstr("--tolerance: expected a non-negative number of points, got '" + std::string(value) + "'"))
        << r.out;
  }
}

TEST(Usage, PresetsAsJsonListModelsAndGpus) {
  const Result r = run("presets --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  bool found_model = false;
  for (const auto& m : j["models"]) found_model = found_model || m["name"] == "gpt3-175b";
  EXPECT_TRUE(found_model);
  const nlohmann::json* h100 = nullptr;
  for (const auto& g : j["gpus"])
    if (g["name"] == "H100-SXM") h100 = &g;
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ((*h100)["architecture"], "hopper");
  EXPECT_GT((*h100)["peak_tflops"]["bf16"].get<double>(), 900.0);
  EXPECT_GT((*h100)["memory_gib"].get<double>(), 70.0);
  // Precisions a GPU lacks are null, not 0.
  for (const auto& g : j["gpus"])
    if (g["name"] == "V100-SXM") { EXPECT_TRUE(g["peak_tflops"]["fp8"].is_null()) << g.dump(); }
  // The text table lists the same GPUs.
  const Result text = run("presets");
  for (const auto& g : j["gpus"]) EXPECT_THAT(text.out, HasSubstr(g["name"].get<std::string>()));
}

// The collective algorithms (algorithms.*) and the training frameworks (parallelism.framework), each with what
// it is, from the registries the scenario reader and the collective layer use: every name listed is accepted.
TEST(Usage, PresetsListAlgorithmsAndFrameworksTheScenarioAccepts) {
  const Result r = run("presets --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["algorithms"].size(), 4u);
  ASSERT_EQ(j["frameworks"].size(), 3u);
  const Result text = run("presets");
  for (const auto& a : j["algorithms"]) {
    const std::string name = a["name"];
    EXPECT_FALSE(a["description"].get<std::string>().empty()) << name;
    EXPECT_THAT(text.out, HasSubstr(name));
    // reduction_server runs all-reduce only, the others all-reduce too.
    const Result accepted = run("run " + kTinyExample + " --json --set algorithms.all_reduce=" + name);
    EXPECT_EQ(accepted.status, 0) << name << ": " << accepted.out;
  }
  for (const auto& f : j["frameworks"]) {
    const std::string name = f["name"];
    EXPECT_THAT(text.out, HasSubstr(name));
    const Result accepted = run("memory " + kTinyExample + " --set parallelism.framework=" + name);
    EXPECT_EQ(accepted.status, 0) << name << ": " << accepted.out;
  }
}

}  // namespace
