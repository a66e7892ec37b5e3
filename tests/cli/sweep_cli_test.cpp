// `trainsim sweep` end to end: the CSV's rows and columns, invalid and out-of-memory points as rows,
// identical bytes whatever the thread or MPI rank count, the plot, linked keys (--zip), and bad input.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace {

using namespace trainsim_cli_test;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

// One file per test: ctest runs tests in parallel processes.
std::string tiny(const std::string& tag) { return temp_file("sweep_tiny_" + tag + ".yaml", kSmallSweepScenario); }

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  return out;
}

TEST(SweepCli, CsvOfATwoByTwoSweepHasFourRowsWithTheKeyValues) {
  const std::string csv = temp_path("sweep_2x2.csv");
  fs::remove(csv);
  const auto r = run("sweep " + tiny("csv") +
                     " --vary cluster.nic_gbps=100,400 --vary training.micro_batch_size=1,2 --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto rows = lines(read_file(csv));
  ASSERT_EQ(rows.size(), 5u) << read_file(csv);
  const auto header = csv_fields(rows[0]);
  ASSERT_GE(header.size(), 5u);
  EXPECT_EQ(header[0], "cluster.nic_gbps");
  EXPECT_EQ(header[1], "training.micro_batch_size");
  EXPECT_EQ(header[2], "status");
  EXPECT_EQ(header[3], "reason");
  for (const char* column : {"iteration_time_s", "tokens_per_s_per_gpu", "mfu", "breakdown.compute", "memory.peak",
                             "memory.fits", "simulation.network_model"})
    EXPECT_NE(std::find(header.begin(), header.end(), column), header.end()) << column;
  EXPECT_EQ(std::find(header.begin(), header.end(), "simulation.wall_s"), header.end());
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"100", "1"}, {"100", "2"}, {"400", "1"}, {"400", "2"}};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto f = csv_fields(rows[i + 1]);
    ASSERT_GE(f.size(), 3u);
    EXPECT_EQ(f[0], expected[i].first) << rows[i + 1];
    EXPECT_EQ(f[1], expected[i].second) << rows[i + 1];
    EXPECT_EQ(f[2], "ok") << rows[i + 1];
    EXPECT_EQ(f.size(), header.size()) << rows[i + 1];
  }
  // The table on stdout names the keys and the marginal gain of each NIC step.
  EXPECT_THAT(r.out, HasSubstr("cluster.nic_gbps"));
  EXPECT_THAT(r.out, HasSubstr("100 -> 400"));
}

TEST(SweepCli, InvalidPointIsARowNamingTheKey) {
  const auto r = run("sweep " + tiny("invalid") + " --vary parallelism.tensor=2,3 --csv -");
  ASSERT_EQ(r.status, 0) << r.out;  // one point simulated
  const auto rows = lines(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;
  EXPECT_EQ(rows[1].substr(0, 5), "2,ok,");
  EXPECT_EQ(rows[2].substr(0, 10), "3,invalid,");
  EXPECT_THAT(rows[2], HasSubstr("parallelism.tensor"));
}

TEST(SweepCli, OutOfMemoryPointIsARowUnlessAllowed) {
  auto r = run("sweep " + tiny("oom") + " --vary model.hidden_size=512,65536 --csv -");
  ASSERT_EQ(r.status, 0) << r.out;
  auto rows = lines(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;
  EXPECT_EQ(rows[1].substr(0, 7), "512,ok,");
  EXPECT_EQ(rows[2].substr(0, 20), "65536,out_of_memory,");
  EXPECT_THAT(rows[2], HasSubstr("does not fit"));

  r = run("sweep " + tiny("oom") + " --vary model.hidden_size=512,65536 --csv - --allow-oom");
  ASSERT_EQ(r.status, 0) << r.out;
  rows = lines(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;
  EXPECT_EQ(rows[2].substr(0, 9), "65536,ok,");
  EXPECT_THAT(rows[2], HasSubstr("false"));  // memory.fits
}

TEST(SweepCli, NoPointSimulatedExitsOne) {
  const auto r = run("sweep " + tiny("none") + " --vary parallelism.tensor=3,5");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("invalid"));
  EXPECT_THAT(r.out, HasSubstr("none of the 2 points simulated"));
}

TEST(SweepCli, OutputIsByteIdenticalWhateverTheThreadCount) {
  const std::string sweep =
      "sweep " + tiny("threads") + " --vary parallelism.tensor=1,2,3 --vary cluster.nic_gbps=100,400";
  const std::string csv1 = temp_path("sweep_t1.csv"), csv3 = temp_path("sweep_t3.csv");
  const auto one = run(sweep + " --threads 1 --csv " + csv1);
  const auto three = run(sweep + " --threads 3 --csv " + csv3);
  ASSERT_EQ(one.status, 0) << one.out;
  ASSERT_EQ(three.status, 0) << three.out;
  EXPECT_EQ(lines(read_file(csv1)).size(), 7u);
  EXPECT_EQ(read_file(csv1), read_file(csv3));
  EXPECT_EQ(one.out, three.out);  // the table too
}

TEST(SweepCli, PlotHasALegendEntryPerSecondKeyValue) {
  if (run_shell("command -v gnuplot").status != 0) GTEST_SKIP() << "gnuplot is not on PATH";
  // A private TMPDIR shows that the script and data files are cleaned up.
  const fs::path tmp = fs::temp_directory_path() / "trainsim_cli_sweep_plot_tmp";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  const std::string svg = temp_path("sweep_plot.svg");
  fs::remove(svg);
  const auto r = run_shell("TMPDIR=" + tmp.string() + " " + TRAINSIM_BINARY + " sweep " + tiny("plot") +
                           " --vary cluster.gpu=H100-SXM,A100 --vary training.micro_batch_size=1,2 --plot " + svg);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string text = read_file(svg);
  EXPECT_THAT(text, HasSubstr("<svg"));
  EXPECT_THAT(text, HasSubstr("training.micro_batch_size=1"));
  EXPECT_THAT(text, HasSubstr("training.micro_batch_size=2"));
  EXPECT_THAT(text, HasSubstr("H100-SXM"));  // categorical x labels
  EXPECT_THAT(text, HasSubstr("sweep_tiny_plot.yaml: iteration_time_s vs cluster.gpu"));
  EXPECT_TRUE(fs::is_empty(tmp));
  fs::remove_all(tmp);
}

TEST(SweepCli, PlotErrorsNameTheirFlag) {
  auto r = run("sweep " + tiny("plot_errors") + " --vary cluster.nic_gbps=100,400 --plot out.pdf");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--plot"));
  if (run_shell("command -v gnuplot").status == 0) {
    r = run("sweep " + tiny("plot_errors") + " --vary cluster.nic_gbps=100,400 --plot " + temp_path("sweep_bad_y.svg") +
            " --y no_such_field");
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_THAT(r.out, HasSubstr("--y 'no_such_field'"));
  }
  // Without gnuplot on PATH the sweep refuses before simulating anything.
  r = run_shell("PATH=/nonexistent " + std::string(TRAINSIM_BINARY) + " sweep " + tiny("plot_errors") +
                " --vary cluster.nic_gbps=100,400 --plot " + temp_path("sweep_nognuplot.svg"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("gnuplot"));
}

TEST(SweepCli, MpirunGivesTheSameCsvAsOneProcess) {
#ifdef TRAINSIM_SANITIZED
  GTEST_SKIP() << "OpenMPI's runtime is not leak-clean under LeakSanitizer";
#endif
  if (run_shell("command -v mpirun").status != 0) GTEST_SKIP() << "mpirun is not on PATH";
  const std::string args =
      " sweep " + tiny("mpi") + " --vary parallelism.tensor=1,2,3 --vary cluster.nic_gbps=100,200,400";
  const std::string alone = temp_path("sweep_alone.csv"), ranks = temp_path("sweep_mpi.csv");
  fs::remove(ranks);
  const auto one = run(args + " --csv " + alone);
  ASSERT_EQ(one.status, 0) << one.out;
  const auto mpi = run_shell("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 --oversubscribe " +
                             std::string(TRAINSIM_BINARY) + args + " --threads 1 --csv " + ranks);
  if (mpi.out.find("built without MPI") != std::string::npos) {  // mpirun installed, libopenmpi-dev was not
    EXPECT_NE(mpi.status, 0);
    GTEST_SKIP() << "this trainsim was built without MPI; checked that it refuses to run under mpirun";
  }
  ASSERT_EQ(mpi.status, 0) << mpi.out;
  EXPECT_EQ(lines(read_file(alone)).size(), 10u);
  EXPECT_EQ(read_file(alone), read_file(ranks));
  EXPECT_EQ(mpi.out, one.out);  // only rank 0 prints, and it prints the same table
}

// --zip: the column index of `name` in a CSV header row.
std::size_t column(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  EXPECT_NE(it, header.end()) << name;
  return static_cast<std::size_t>(it - header.begin());
}

// TP, GPU count and global batch grow together (a range works as in --vary: 16, 32, 48), so data
// parallelism stays 4 (GPUs / TP) and every point is valid; their cartesian product would not be.
const std::string kZip =
    " --zip parallelism.tensor=1,2,4 --zip cluster.num_gpus=4,8,16 --zip training.global_batch_size=16:48:16";

TEST(SweepCli, ZipOfThreePointsTimesTwoVaryValuesGivesSixRowsWithLinkedValues) {
  const auto r = run("sweep " + tiny("zip") + kZip + " --vary cluster.nic_gbps=100,400 --csv -");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto rows = lines(r.out);
  ASSERT_EQ(rows.size(), 7u) << r.out;
  const auto header = csv_fields(rows[0]);
  ASSERT_GE(header.size(), 6u);
  // Every zipped key has its column, in command-line order, then the varied key (--zip came first).
  EXPECT_EQ(header[0], "parallelism.tensor");
  EXPECT_EQ(header[1], "cluster.num_gpus");
  EXPECT_EQ(header[2], "training.global_batch_size");
  EXPECT_EQ(header[3], "cluster.nic_gbps");
  EXPECT_EQ(header[4], "status");
  const std::vector<std::vector<std::string>> expected = {{"1", "4", "16", "100"},  {"1", "4", "16", "400"},
                                                          {"2", "8", "32", "100"},  {"2", "8", "32", "400"},
                                                          {"4", "16", "48", "100"}, {"4", "16", "48", "400"}};
  const std::size_t tokens = column(header, "tokens_per_s"), per_gpu = column(header, "tokens_per_s_per_gpu"),
                    iteration = column(header, "iteration_time_s");
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto f = csv_fields(rows[i + 1]);
    ASSERT_EQ(f.size(), header.size()) << rows[i + 1];
    EXPECT_EQ(std::vector<std::string>(f.begin(), f.begin() + 4), expected[i]) << rows[i + 1];
    ASSERT_EQ(f[4], "ok") << rows[i + 1];
    // The simulation really saw the linked values: tokens/s over tokens/s/GPU is the GPU count, and
    // tokens/s times the iteration time is the global batch times seq_length (512).
    EXPECT_NEAR(std::stod(f[tokens]) / std::stod(f[per_gpu]), std::stod(expected[i][1]), 1e-6) << rows[i + 1];
    EXPECT_NEAR(std::stod(f[tokens]) * std::stod(f[iteration]) / 512.0, std::stod(expected[i][2]), 1e-6) << rows[i + 1];
  }
}

TEST(SweepCli, ZipOutputIsByteIdenticalWithOneOrTwoThreads) {
  const std::string sweep = "sweep " + tiny("zip_threads") + " --vary cluster.nic_gbps=100,400" + kZip;
  const std::string csv1 = temp_path("sweep_zip_t1.csv"), csv2 = temp_path("sweep_zip_t2.csv");
  const auto one = run(sweep + " --threads 1 --csv " + csv1);
  const auto two = run(sweep + " --threads 2 --csv " + csv2);
  ASSERT_EQ(one.status, 0) << one.out;
  ASSERT_EQ(two.status, 0) << two.out;
  const auto rows = lines(read_file(csv1));
  ASSERT_EQ(rows.size(), 7u);
  // --vary came first this time: it is the first column and the slowest key.
  EXPECT_EQ(csv_fields(rows[0])[0], "cluster.nic_gbps");
  EXPECT_EQ(rows[1].substr(0, 11), "100,1,4,16,");
  EXPECT_EQ(rows[2].substr(0, 11), "100,2,8,32,");
  EXPECT_EQ(read_file(csv1), read_file(csv2));
  EXPECT_EQ(one.out, two.out);                    // the table too
  EXPECT_THAT(one.out, HasSubstr("100 -> 400"));  // the marginal gain of the NIC, the first axis
}

TEST(SweepCli, ZipAloneStepsTheLinkedKeysTogether) {
  const auto r = run("sweep " + tiny("zip_alone") + kZip);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("(1, 4, 16) -> (2, 8, 32)"));
  EXPECT_THAT(r.out, HasSubstr("(parallelism.tensor + cluster.num_gpus + training.global_batch_size)"));
}

TEST(SweepCli, BadZipExitsOneNamingZip) {
  auto r = run("sweep " + tiny("bad_zip") + " --zip parallelism.tensor=1,2,4 --zip cluster.num_gpus=4,8");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--zip"));
  EXPECT_THAT(r.out, HasSubstr("parallelism.tensor has 3"));
  EXPECT_THAT(r.out, HasSubstr("cluster.num_gpus has 2"));

  r = run("sweep " + tiny("bad_zip") +
          " --vary parallelism.tensor=1,2 --zip parallelism.tensor=1,2 --zip cluster.num_gpus=4,8");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--zip 'parallelism.tensor=1,2'"));
  EXPECT_THAT(r.out, HasSubstr("also given to --vary"));

  r = run("sweep " + tiny("bad_zip") + " --zip parallelism.tensr=1,2");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--zip 'parallelism.tensr=1,2'"));

  r = run("sweep " + tiny("bad_zip") + " --zip cluster.num_gpus=4,8 --set cluster.num_gpus=12");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--set"));
  EXPECT_THAT(r.out, HasSubstr("--zip"));

  r = run("sweep " + tiny("bad_zip"));  // neither --vary nor --zip
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--vary"));
  EXPECT_THAT(r.out, HasSubstr("--zip"));
}

TEST(SweepCli, BadVaryExitsOneNamingVary) {
  for (const char* vary :
       {"cluster.nic_gbps", "cluster.nic_gpbs=100,200", "cluster.nic_gbps=100:400:0", "cluster.nic_gbps=a:b:c"}) {
    const auto r = run("sweep " + tiny("bad") + " --vary " + vary);
    EXPECT_EQ(r.status, 1) << vary << ": " << r.out;
    EXPECT_THAT(r.out, HasSubstr("--vary")) << vary;
    EXPECT_THAT(r.out, HasSubstr(vary));
  }
  const auto twice = run("sweep " + tiny("bad") + " --vary cluster.nic_gbps=100 --vary cluster.nic_gbps=200");
  EXPECT_EQ(twice.status, 1) << twice.out;
  EXPECT_THAT(twice.out, HasSubstr("--vary"));
  const auto conflict = run("sweep " + tiny("bad") + " --vary cluster.nic_gbps=100,200 --set cluster.nic_gbps=400");
  EXPECT_EQ(conflict.status, 1) << conflict.out;
  EXPECT_THAT(conflict.out, HasSubstr("--set"));
  const auto missing = run("sweep " + temp_path("no_such_scenario.yaml") + " --vary cluster.nic_gbps=100,200");
  EXPECT_EQ(missing.status, 1) << missing.out;
  EXPECT_THAT(missing.out, HasSubstr("no_such_scenario.yaml"));
}

}  // namespace

namespace {

// The whole run per point: --tokens adds each point's run plan, --objective names the best point (text) and says
// which (JSON); the run-level objectives need --tokens, and a point whose run cannot be planned says why by key.
TEST(SweepCli, TokensPlanEachPointsRunAndTheObjectiveNamesTheBest) {
  const std::string scenario =
      temp_file("sweep_run_level.yaml", std::string(kSmallSweepScenario) + "cost: {usd_per_gpu_hour: 2}\n");
  const std::string sweep =
      "sweep " + scenario + " --vary cluster.num_gpus=4,12 --set training.resilience.storage_GBps=5";
  const auto text = run(sweep + " --tokens 1e9 --objective days");
  ASSERT_EQ(text.status, 0) << text.out;
  // 12 GPUs finish the same tokens sooner than 4 (three times the data parallelism).
  EXPECT_THAT(text.out, HasSubstr("best by days: cluster.num_gpus=12 ("));
  const auto out = nlohmann::json::parse(run(sweep + " --tokens 1e9 --objective energy --json").out);
  ASSERT_EQ(out.at("points").size(), 2u);
  double energy[2];
  for (int i = 0; i < 2; ++i) {
    const auto& result = out.at("points")[i].at("result");
    const auto& plan = result.at("run_plan");
    EXPECT_DOUBLE_EQ(plan.at("tokens").get<double>(), 1e9);
    EXPECT_GT(plan.at("days").get<double>(), 0);
    EXPECT_GT(plan.at("cost_usd").get<double>(), 0);  // the scenario's cost block
    EXPECT_DOUBLE_EQ(result.at("objective").get<double>(), plan.at("energy_mwh").get<double>());
    energy[i] = plan.at("energy_mwh").get<double>();
  }
  EXPECT_EQ(out.at("objective").at("name"), "energy");
  EXPECT_EQ(out.at("objective").at("best_point"), energy[0] <= energy[1] ? 0 : 1);
  // The CSV has the plan's columns.
  const auto csv = run(sweep + " --tokens 1e9 --csv -");
  ASSERT_EQ(csv.status, 0) << csv.out;
  EXPECT_THAT(lines(csv.out).at(0), HasSubstr("run_plan.days,run_plan.goodput,run_plan.failures"));

  EXPECT_THAT(run(sweep + " --objective days").out, HasSubstr("--tokens: --objective days needs the number of tokens"));
  EXPECT_THAT(run(sweep + " --tokens lots").out, HasSubstr("--tokens: expected a positive token count"));
  EXPECT_THAT(run(sweep + " --gpu-hour-price 2").out, HasSubstr("--gpu-hour-price: only used with --objective cost"));
  // Without a storage bandwidth no point can be planned: each row names the key.
  const auto bare = run("sweep " + scenario + " --vary cluster.num_gpus=4,12 --tokens 1e9 --csv -");
  EXPECT_EQ(bare.status, 1);
  EXPECT_THAT(bare.out, HasSubstr("training.resilience.storage_GBps"));
}

}  // namespace
