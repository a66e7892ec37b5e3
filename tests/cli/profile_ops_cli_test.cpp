// The profiler pipeline end to end on the CPU: tools/profile/profile_ops.py asks `trainsim ops --json`
// for the kernels of a tiny scenario, times each with PyTorch and writes the op database CSV
// (docs/op-database.md). Needs python3 with torch (CI: Debian's python3-torch); skipped without.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <utility>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace trainsim_cli_test;

namespace {

// The tiny model of ops_cli_test.cpp, on one GPU so its kernels stay small on a CPU: h = 256,
// 4 heads of 64, FFN 1024, sequence 128, vocabulary 2048, 2 layers, 2 micro-batches.
const char* const kProfileScenario = R"(
model:
  preset: gpt3-1.3b
  num_layers: 2
  hidden_size: 256
  num_attention_heads: 4
  num_query_groups: 4
  kv_channels: 64
  ffn_hidden_size: 1024
  seq_length: 128
  vocab_size: 2048
training:
  global_batch_size: 2
  micro_batch_size: 1
  precision: bf16
parallelism:
  tensor: 1
  pipeline: 1
cluster:
  gpu: H100-SXM
  num_gpus: 1
  gpus_per_node: 1
)";

const char* const kHeader = "gpu,op,dtype,m,n,k,batch,causal,bytes,time_us";

// A python3 that imports torch: the one on PATH, else Debian's (a PATH python3 from pyenv or a
// virtual environment does not see python3-torch). Empty when there is none.
std::string python_with_torch() {
  for (const char* py : {"python3", "/usr/bin/python3"})
    if (run_shell(std::string(py) + " -c 'import torch'").status == 0) return py;
  return "";
}

std::string script() { return std::string(TRAINSIM_SOURCE_DIR) + "/tools/profile/profile_ops.py"; }

// What profile_ops.py writes for one row of `trainsim ops --json`: shape-keyed kinds carry m, n, k,
// batch, causal and bytes 0; memory-bound kinds 0, 0, 0, 1, 0 and their bytes (docs/op-database.md §1).
std::string db_key(const nlohmann::json& op) {
  const std::string kind = op["op"];
  const bool shape =
      kind == "gemm" || kind == "attention_unfused" || kind == "flash_attn_fwd" || kind == "flash_attn_bwd";
  std::ostringstream s;
  s << kind << ',' << op["dtype"].get<std::string>() << ',';
  if (shape)
    s << op["m"] << ',' << op["n"] << ',' << op["k"] << ',' << op["batch"] << ',' << (op["causal"].get<bool>() ? 1 : 0)
      << ",0";
  else
    s << "0,0,0,1,0," << op["bytes"];
  return s.str();
}

// How profile_ops.py names a kernel in its "skip ..." lines.
std::string describe(const nlohmann::json& op) {
  const std::string kind = op["op"];
  std::ostringstream s;
  s << kind << ' ' << op["dtype"].get<std::string>();
  if (kind == "gemm" || kind == "attention_unfused" || kind == "flash_attn_fwd" || kind == "flash_attn_bwd")
    s << " m=" << op["m"] << " n=" << op["n"] << " k=" << op["k"] << " batch=" << op["batch"]
      << (op["causal"].get<bool>() ? " causal" : "");
  else
    s << " bytes=" << op["bytes"];
  return s.str();
}

struct Database {
  std::vector<std::string> comments;
  std::string header;
  std::map<std::string, double> time_us;  // db_key -> time
  std::vector<std::string> errors;
  std::string gpu;
};

Database read_database(const std::string& path) {
  Database db;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      db.comments.push_back(line);
      continue;
    }
    if (db.header.empty()) {
      db.header = line;
      continue;
    }
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    if (f.size() != 10) {
      db.errors.push_back("not 10 fields: " + line);
      continue;
    }
    db.gpu = f[0];
    const std::string key =
        f[1] + ',' + f[2] + ',' + f[3] + ',' + f[4] + ',' + f[5] + ',' + f[6] + ',' + f[7] + ',' + f[8];
    if (db.time_us.count(key)) db.errors.push_back("duplicate row: " + line);
    db.time_us[key] = std::stod(f[9]);
  }
  return db;
}

std::string profile(const std::string& python, const std::string& scenario, const std::string& csv,
                    const std::string& extra, Result* r) {
  *r = run_shell(python + " " + script() + " " + scenario + " -o " + csv + " --trainsim " + TRAINSIM_BINARY +
                 " --device cpu --warmup 1 --iters 2" + extra);
  return r->out;
}

// The tool run on a scenario (written to `name`.yaml), what it wrote (read back from `name`.csv) and the scenario's
// kernel list (`trainsim ops --json`).
struct Profiled {
  Result tool;
  nlohmann::json ops;
  Database db;
};
Profiled profile_scenario(const std::string& python, const std::string& name, const std::string& yaml,
                          const std::string& extra = "") {
  const std::string scenario = temp_file(name + ".yaml", yaml);
  const std::string csv = (std::filesystem::temp_directory_path() / ("trainsim_cli_" + name + ".csv")).string();
  std::filesystem::remove(csv);
  Profiled p;
  profile(python, scenario, csv, extra, &p.tool);
  const Result listing = run("ops " + scenario + " --json");
  EXPECT_EQ(listing.status, 0) << listing.out;
  if (listing.status == 0) p.ops = nlohmann::json::parse(listing.out)["ops"];
  if (p.tool.status == 0) p.db = read_database(csv);
  return p;
}

}  // namespace

// Every kernel of `trainsim ops --json` gets one row (or a skip line), in the fixed format, with a
// positive time; nothing else is written.
TEST(ProfileOpsCli, WritesOneRowPerKernelOnTheCpu) {
  const std::string python = python_with_torch();
  if (python.empty())
    GTEST_SKIP() << "python3 cannot import torch (apt-get install python3-torch): profiler not tested";
  const Profiled p = profile_scenario(python, "profile_ops_tiny", kProfileScenario);
  const Result& r = p.tool;
  ASSERT_EQ(r.status, 0) << r.out;
  const auto& ops = p.ops;
  ASSERT_GT(ops.size(), 10u);
  const Database& db = p.db;
  ASSERT_FALSE(db.comments.empty());
  EXPECT_EQ(db.comments.front(), "# trainsim op database v1");
  EXPECT_EQ(db.header, kHeader);
  EXPECT_TRUE(db.errors.empty()) << db.errors.front();
  EXPECT_EQ(db.gpu, "cpu");  // --gpu-name defaults to "cpu" on the CPU
  std::size_t skipped = 0;
  for (const auto& op : ops) {
    const auto it = db.time_us.find(db_key(op));
    if (it == db.time_us.end()) {
      ++skipped;
      EXPECT_NE(r.out.find("skip " + describe(op) + ": "), std::string::npos) << db_key(op) << "\n" << r.out;
      continue;
    }
    EXPECT_GT(it->second, 0.0) << it->first;
  }
  EXPECT_EQ(db.time_us.size() + skipped, ops.size()) << "rows that are no kernel of the scenario";
  // Nothing in this model is too big for the CPU limits: every kernel is measured.
  EXPECT_EQ(skipped, 0u) << r.out;
}

// An NVFP4 scenario (B200, training.precision fp4): the tool does not run Transformer Engine's NVFP4 GEMMs, so each
// is skipped with that reason; every other kernel (the BF16 attention, norms, quantization kernels) gets its row.
TEST(ProfileOpsCli, Nvfp4GemmsAreSkippedWithTheirReason) {
  const std::string python = python_with_torch();
  if (python.empty())
    GTEST_SKIP() << "python3 cannot import torch (apt-get install python3-torch): profiler not tested";
  std::string yaml = kProfileScenario;
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"precision: bf16", "precision: fp4"},
                                 std::pair<std::string, std::string>{"gpu: H100-SXM", "gpu: B200"}}) {
    const auto at = yaml.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    yaml.replace(at, from.size(), to);
  }
  const Profiled p = profile_scenario(python, "profile_ops_fp4", yaml);
  const Result& r = p.tool;
  ASSERT_EQ(r.status, 0) << r.out;
  const auto& ops = p.ops;
  const Database& db = p.db;
  EXPECT_TRUE(db.errors.empty()) << db.errors.front();
  int fp4_gemms = 0;
  for (const auto& op : ops) {
    const bool fp4_gemm = op["op"] == "gemm" && op["dtype"] == "fp4";
    fp4_gemms += fp4_gemm ? 1 : 0;
    if (fp4_gemm) {
      EXPECT_EQ(db.time_us.count(db_key(op)), 0u) << db_key(op);
      EXPECT_NE(r.out.find("skip " + describe(op) + ": NVFP4 GEMMs"), std::string::npos) << describe(op) << "\n"
                                                                                         << r.out;
    } else {
      EXPECT_EQ(db.time_us.count(db_key(op)), 1u) << db_key(op) << "\n" << r.out;
    }
  }
  EXPECT_GT(fp4_gemms, 0);
}

// --max-ops caps the work: the first N kernels are profiled, the rest skipped with a message each;
// --gpu-name sets the gpu column.
TEST(ProfileOpsCli, MaxOpsSkipsTheRestWithAMessage) {
  const std::string python = python_with_torch();
  if (python.empty())
    GTEST_SKIP() << "python3 cannot import torch (apt-get install python3-torch): profiler not tested";
  const Profiled p = profile_scenario(python, "profile_ops_cap", kProfileScenario, " --max-ops 3 --gpu-name my-box");
  const Result& r = p.tool;
  ASSERT_EQ(r.status, 0) << r.out;
  const auto& ops = p.ops;
  const Database& db = p.db;
  EXPECT_EQ(db.header, kHeader);
  ASSERT_EQ(db.time_us.size(), 3u) << r.out;
  EXPECT_EQ(db.gpu, "my-box");
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (i < 3)
      EXPECT_EQ(db.time_us.count(db_key(ops[i])), 1u) << db_key(ops[i]);
    else
      EXPECT_NE(r.out.find("skip " + describe(ops[i]) + ": over --max-ops 3"), std::string::npos) << r.out;
  }
}

// trainsim's error for a bad scenario comes through, and the script fails.
TEST(ProfileOpsCli, BadScenarioKeyIsReported) {
  const std::string python = python_with_torch();
  if (python.empty())
    GTEST_SKIP() << "python3 cannot import torch (apt-get install python3-torch): profiler not tested";
  const std::string scenario = temp_file("profile_ops_bad.yaml", kProfileScenario);
  const std::string csv = (std::filesystem::temp_directory_path() / "trainsim_cli_profile_ops_bad.csv").string();
  Result r;
  profile(python, scenario, csv, " --set parallelism.tensr=2", &r);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("parallelism.tensr"), std::string::npos) << r.out;
}

// --ops-json reads a kernel list saved from `trainsim ops --json` (a GPU machine without trainsim): the
// same rows as profiling the scenario, and trainsim is not run (a binary that does not exist is named).
TEST(ProfileOpsCli, SavedKernelListNeedsNoTrainsim) {
  const std::string python = python_with_torch();
  if (python.empty())
    GTEST_SKIP() << "python3 cannot import torch (apt-get install python3-torch): profiler not tested";
  const std::string scenario = temp_file("profile_ops_saved.yaml", kProfileScenario);
  const Result listing = run("ops " + scenario + " --json");
  ASSERT_EQ(listing.status, 0) << listing.out;
  const std::string saved = temp_file("profile_ops_saved.json", listing.out);
  const std::string csv = (std::filesystem::temp_directory_path() / "trainsim_cli_profile_ops_saved.csv").string();
  std::filesystem::remove(csv);
  const Result r = run_shell(python + " " + script() + " --ops-json " + saved + " -o " + csv +
                             " --trainsim /nonexistent/trainsim --device cpu --warmup 0 --iters 1 --max-ops 4");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto ops = nlohmann::json::parse(listing.out)["ops"];
  const Database db = read_database(csv);
  EXPECT_EQ(db.header, kHeader);
  ASSERT_EQ(db.time_us.size(), 4u) << r.out;
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(db.time_us.count(db_key(ops[i])), 1u) << db_key(ops[i]);
}

// A scenario and --ops-json together, neither, --set with --ops-json, an unreadable or foreign file:
// each a clear error naming what is wrong, before torch is imported.
TEST(ProfileOpsCli, BadKernelListArgumentsAreReported) {
  const std::string python = python_with_torch();
  if (python.empty())
    GTEST_SKIP() << "python3 cannot import torch (apt-get install python3-torch): profiler not tested";
  const std::string scenario = temp_file("profile_ops_args.yaml", kProfileScenario);
  const std::string foreign = temp_file("profile_ops_foreign.json", R"({"rows": []})");
  const std::string broken = temp_file("profile_ops_broken.json", "{not json");
  const std::string base = python + " " + script() + " -o /tmp/trainsim_cli_profile_ops_args.csv ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {scenario + " --ops-json " + foreign, "one of the two"},
      {"", "one of the two"},
      {"--ops-json " + foreign + " --set model.num_layers=1", "--set applies to a scenario"},
      {"--ops-json /nonexistent/list.json", "cannot read --ops-json"},
      {"--ops-json " + broken, "is not JSON"},
      {"--ops-json " + foreign, "needs 'gpu' and a list 'ops'"},
  };
  for (const auto& [args, fragment] : cases) {
    const Result r = run_shell(base + args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_NE(r.out.find(fragment), std::string::npos) << args << "\n" << r.out;
  }
}
