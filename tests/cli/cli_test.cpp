// End-to-end: the trainsim binary on the examples and on bad input, as a user runs it.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <set>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace trainsim_cli_test;

// Every example runs, and its JSON obeys the spec's identities: tokens/s = B*s/T, the breakdown
// sums to the iteration time, MFU within (0, 1), HFU >= MFU.
TEST(Cli, ExamplesRunAndSatisfyResultIdentities) {
  const std::pair<const char*, double> cases[] = {{"tiny-8-h100.yaml", 32.0 * 2048},
                                                  {"gpt3-13b-128-a100.yaml", 1024.0 * 2048},
                                                  {"gpt3-175b-1024-h100.yaml", 1536.0 * 2048},
                                                  {"llama3-70b-512-h100.yaml", 512.0 * 8192},
                                                  {"llama3-405b-16384-h100.yaml", 2048.0 * 8192}};
  for (const auto& [file, tokens] : cases) {
    const Result r = run("run " + example(file) + " --json --no-timing");
    ASSERT_EQ(r.status, 0) << file << "\n" << r.out;
    const auto j = nlohmann::json::parse(r.out);
    const double t = j["iteration_time_s"];
    EXPECT_GT(t, 0.0) << file;
    EXPECT_NEAR(j["tokens_per_s"].get<double>(), tokens / t, 1e-6 * tokens / t) << file;
    const auto& b = j["breakdown"];
    const double sum = b["compute"].get<double>() + b["exposed_comm"].get<double>() + b["bubble"].get<double>() +
                       b["optimizer"].get<double>() + b["other"].get<double>();
    EXPECT_NEAR(sum, t, 1e-6 * t) << file;
    EXPECT_GT(j["mfu"].get<double>(), 0.0) << file;
    EXPECT_LT(j["mfu"].get<double>(), 1.0) << file;
    EXPECT_GE(j["hfu"].get<double>(), j["mfu"].get<double>()) << file;
    EXPECT_TRUE(j["memory"]["fits"].get<bool>()) << file;
    EXPECT_FALSE(j["comm"].empty()) << file;
  }
}

// Same scenario twice: byte-identical JSON (wall time zeroed by --no-timing).
TEST(Cli, JsonIsByteIdenticalAcrossRuns) {
  const Result a = run("run " + example("gpt3-175b-1024-h100.yaml") + " --json --no-timing");
  const Result b = run("run " + example("gpt3-175b-1024-h100.yaml") + " --json --no-timing");
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_EQ(a.out, b.out);
}

// --set changes the simulated job: halving the NIC speed cannot make the 1,024-GPU job faster,
// and TP 4 changes the data-parallel size the report shows.
TEST(Cli, SetOverridesChangeTheResult) {
  const Result base = run("run " + example("gpt3-175b-1024-h100.yaml") + " --json --no-timing");
  const Result slow =
      run("run " + example("gpt3-175b-1024-h100.yaml") + " --json --no-timing --set cluster.nic_gbps=100");
  ASSERT_EQ(base.status, 0);
  ASSERT_EQ(slow.status, 0) << slow.out;
  EXPECT_GT(nlohmann::json::parse(slow.out)["iteration_time_s"].get<double>(),
            nlohmann::json::parse(base.out)["iteration_time_s"].get<double>());
  const Result tp4 = run("run " + example("tiny-8-h100.yaml") + " --set parallelism.tensor=4");
  ASSERT_EQ(tp4.status, 0) << tp4.out;
  EXPECT_NE(tp4.out.find("TP 4"), std::string::npos) << tp4.out;
  EXPECT_NE(tp4.out.find("DP 2"), std::string::npos) << tp4.out;
}

// The trace is valid Chrome-trace JSON with a process per simulated rank.
TEST(Cli, TraceIsValidChromeTraceJson) {
  const auto path = (std::filesystem::temp_directory_path() / "trainsim_cli_trace.json").string();
  const Result r = run("run " + example("llama3-70b-512-h100.yaml") + " --trace " + path + " --trace-ranks 0,128");
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream f(path);
  const auto j = nlohmann::json::parse(f);
  std::set<int> pids;
  std::size_t spans = 0;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X") {
      pids.insert(e["pid"].get<int>());
      ++spans;
    }
  EXPECT_EQ(pids, (std::set<int>{0, 128}));
  EXPECT_GT(spans, 1000u);
}

// A stream runs one op at a time, so in the trace each span ends at or before the next one on its
// stream starts, to the nanosecond the file is written in: rounding a start and a duration separately
// used to leave some spans ending 1 ns after their successor began.
TEST(Cli, TraceSpansOfAStreamNeverOverlap) {
  const auto path = (std::filesystem::temp_directory_path() / "trainsim_cli_trace_order.json").string();
  const Result r = run("run " + example("llama3-70b-512-h100.yaml") + " --trace " + path + " --trace-ranks 0");
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream f(path);
  const auto j = nlohmann::json::parse(f);
  std::map<std::pair<int, int>, std::vector<std::pair<long long, long long>>> streams;  // (start, end) in ns
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X") {
      const long long start = std::llround(e["ts"].get<double>() * 1e3);
      const long long end = start + std::llround(e["dur"].get<double>() * 1e3);
      streams[{e["pid"].get<int>(), e["tid"].get<int>()}].emplace_back(start, end);
    }
  ASSERT_FALSE(streams.empty());
  std::size_t checked = 0;
  for (auto& [stream, spans] : streams) {
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i, ++checked)
      ASSERT_LE(spans[i - 1].second, spans[i].first)
          << "rank " << stream.first << " stream " << stream.second << ": span " << i - 1 << " ends at "
          << spans[i - 1].second << " ns, after span " << i << " starts at " << spans[i].first << " ns";
  }
  EXPECT_GT(checked, 1000u);
}

TEST(Cli, BadInputExitsNonZeroWithTheKey) {
  const auto unknown = temp_file("unknown.yaml",
                                 "model: {preset: gpt3-1.3b}\nparallelism: {tensor_parallel: 2}\n"
                                 "training: {global_batch_size: 8}\ncluster: {gpu: H100-SXM, num_gpus: 8}\n");
  Result r = run("run " + unknown);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("parallelism.tensor_parallel"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("parallelism.tensor"), std::string::npos) << r.out;

  r = run("run " + example("tiny-8-h100.yaml") + " --set parallelism.tensor=3");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("tensor 3"), std::string::npos) << r.out;

  r = run("run /nonexistent/scenario.yaml");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("/nonexistent/scenario.yaml"), std::string::npos) << r.out;

  r = run("run " + example("llama3-70b-512-h100.yaml") + " --trace /tmp/trainsim_cli_t.json --trace-ranks 5");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("--trace-ranks: rank 5 is not simulated"), std::string::npos) << r.out;

  r = run("run " + example("llama3-405b-16384-h100.yaml") + " --per-rank");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("simulation.per_rank"), std::string::npos) << r.out;

  // A whole GPT-3 175B iteration on 1,024 GPUs is ~10^10 packets: refused before it starts, with the estimate.
  r = run("run " + example("gpt3-175b-1024-h100.yaml") + " --set simulation.network_model=packet");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("simulation.network_model"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("simulation.max_packets"), std::string::npos) << r.out;
}

// A job that cannot fit is an error with the numbers, unless --allow-oom.
TEST(Cli, OutOfMemoryIsAnErrorUnlessAllowed) {
  const std::string args =
      "run " + example("gpt3-175b-1024-h100.yaml") + " --set training.recompute=none --set training.micro_batch_size=8";
  Result r = run(args);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("does not fit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GiB"), std::string::npos) << r.out;
  r = run(args + " --allow-oom --json");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_FALSE(nlohmann::json::parse(r.out)["memory"]["fits"].get<bool>());
}

TEST(Cli, PresetsListsModelsAndGpus) {
  const Result r = run("presets");
  ASSERT_EQ(r.status, 0);
  for (const char* name : {"gpt3-175b", "llama3-405b", "H100-SXM", "MI300X", "B200"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
}

// `trainsim presets` lists every collective algorithm (algorithms.*) and training framework (parallelism.framework)
// a scenario can name, each at the start of its line under its heading, followed by its description.
TEST(Cli, PresetsListsEveryAlgorithmAndFramework) {
  const Result r = run("presets");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto algorithms = r.out.find("Collective algorithms (algorithms.all_reduce");
  const auto frameworks = r.out.find("Training frameworks (parallelism.framework)");
  ASSERT_NE(algorithms, std::string::npos) << r.out;
  ASSERT_NE(frameworks, std::string::npos) << r.out;
  for (const char* name : {"nccl", "halving_doubling", "hierarchical", "reduction_server"}) {
    const auto at = r.out.find("\n  " + std::string(name) + " ", algorithms);
    EXPECT_TRUE(at != std::string::npos && at < frameworks) << name << "\n" << r.out;
  }
  for (const char* name : {"megatron", "deepspeed", "fsdp"})
    EXPECT_NE(r.out.find("\n  " + std::string(name) + " ", frameworks), std::string::npos) << name << "\n" << r.out;
  EXPECT_NE(r.out.find("Rabenseifner", algorithms), std::string::npos);  // halving_doubling's description
  EXPECT_NE(r.out.find("PyTorch FSDP", frameworks), std::string::npos);  // fsdp's
}

// validate on a directory prints a row per case with a reference and the summary.
TEST(Cli, ValidateReportsErrorsAgainstReferences) {
  const auto dir = std::filesystem::temp_directory_path() / "trainsim_cli_validate";
  std::filesystem::create_directories(dir);
  std::ifstream in(example("tiny-8-h100.yaml"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir / "case-a.yaml") << text
                                     << "reference:\n  source: test\n  confidence: high\n  iteration_time_s: 0.2\n";
  const Result r = run("validate " + dir.string() + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["cases"].size(), 1u);
  EXPECT_EQ(j["cases"][0]["name"], "case-a");
  const auto& f = j["cases"][0]["fields"][0];
  EXPECT_EQ(f["field"], "iteration_time_s");
  EXPECT_NEAR(f["error"].get<double>(), (f["simulated"].get<double>() - 0.2) / 0.2, 1e-9);
}

// validate --set applies an override to every case (what-if over published runs): a slower attention
// kernel makes the simulated iteration longer; an unknown key makes the case fail with the key named.
TEST(Cli, ValidateSetOverridesEveryCase) {
  const auto dir = std::filesystem::temp_directory_path() / "trainsim_cli_validate_set";
  std::filesystem::create_directories(dir);
  std::ifstream in(example("tiny-8-h100.yaml"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir / "case-b.yaml") << text
                                     << "reference:\n  source: test\n  confidence: high\n  iteration_time_s: 0.2\n";
  auto simulated = [&](const std::string& extra) {
    const Result r = run("validate " + dir.string() + " --json" + extra);
    EXPECT_EQ(r.status, 0) << r.out;
    return nlohmann::json::parse(r.out)["cases"][0]["fields"][0]["simulated"].get<double>();
  };
  const double base = simulated("");
  EXPECT_GT(simulated(" --set training.attention_kernel=flash1"), base);
  // A case that fails makes the exit status 1; the table (stdout) still has its row.
  const Result bad = run_shell("{ " + std::string(TRAINSIM_BINARY) + " validate " + dir.string() +
                               " --json --set training.no_such_key=1 2>/dev/null; }");
  ASSERT_EQ(bad.status, 1) << bad.out;
  const auto j = nlohmann::json::parse(bad.out);
  EXPECT_NE(j["cases"][0]["error"].get<std::string>().find("no_such_key"), std::string::npos) << bad.out;
}
