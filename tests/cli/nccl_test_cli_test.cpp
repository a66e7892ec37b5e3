// `trainsim nccl-test` end to end: the table's rows, nccl-tests' size/count/busbw conventions, the
// NCCL choices of the reference's 2 x 8 H100 worked example, --set / --gpus / --json, bad flags.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace trainsim_cli_test;

namespace {

// The NCCL example of docs/collectives.md: 2 nodes × 8 H100 (NVSwitch), 8 × 400 Gb/s NICs per node.
std::string two_node_h100() {
  // One file per test: ctest runs the tests of this file as concurrent processes.
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  return temp_file("nccl_test_2x8_" + test + ".yaml",
                   "cluster: {gpu: H100-SXM, num_gpus: 16, gpus_per_node: 8, nics_per_node: 8, nic_gbps: 400}\n"
                   "collective: {op: all_reduce}\n");
}

nlohmann::json rows(const std::string& args) {
  const Result r = run("nccl-test " + args + " --json");
  EXPECT_EQ(r.status, 0) << r.out;
  return nlohmann::json::parse(r.out)["rows"];
}

}  // namespace

TEST(NcclTestCli, SizesStepByTheFactorAndRowsCarryEveryColumn) {
  const auto j = rows(two_node_h100() + " --op all_reduce -b 8 -e 8G -f 2");
  ASSERT_EQ(j.size(), 31u);  // 8 B, 16 B, ..., 8 GiB
  // -e near the int64 limit: exabyte messages would take longer than the simulator's clock holds, which is a
  // clear error rather than an overflowed size or time; -i steps by bytes.
  const Result huge = run("nccl-test " + two_node_h100() + " -b 4096T -e 8000000T -f 4 --json");
  EXPECT_NE(huge.status, 0);
  EXPECT_NE(huge.out.find("beyond the simulator's clock"), std::string::npos) << huge.out;
  EXPECT_EQ(rows(two_node_h100() + " -b 1K -e 4K -i 1K").size(), 4u);
  EXPECT_EQ(j.front()["size_bytes"], 8);
  EXPECT_EQ(j.back()["size_bytes"], std::int64_t{8} << 30);
  for (const auto& row : j) {
    for (const char* key :
         {"size_bytes", "count", "dtype", "time_us", "algbw_GBps", "busbw_GBps", "algorithm", "protocol", "channels"})
      EXPECT_TRUE(row.contains(key)) << key;
    EXPECT_EQ(row["count"], row["size_bytes"].get<std::int64_t>() / 4);  // float
    // nccl-tests: algbw = size / time, busbw = algbw * 2(n-1)/n for all-reduce.
    const double algbw = row["size_bytes"].get<double>() / (1000.0 * row["time_us"].get<double>());
    EXPECT_NEAR(row["algbw_GBps"].get<double>(), algbw, 1e-9 * algbw + 1e-12);
    EXPECT_NEAR(row["busbw_GBps"].get<double>(), algbw * 30.0 / 16.0, 1e-9 * algbw + 1e-12);
  }
}

// The worked example's choices and predicted times (NCCL 2.30.7's cost model; docs/collectives.md).
TEST(NcclTestCli, ReproducesTheWorkedExample) {
  const std::string sc = two_node_h100();
  auto j = rows(sc + " --op all_reduce -d bfloat16 -b 1G -e 1G");
  EXPECT_EQ(j[0]["algorithm"], "NVLSTree");
  EXPECT_EQ(j[0]["channels"], 16);
  EXPECT_NEAR(j[0]["time_us"].get<double>(), 4428.0, 2.0);

  j = rows(sc + " --op all_reduce -d bfloat16 -b 1G -e 1G --set nccl.NCCL_NVLS_ENABLE=0");
  EXPECT_EQ(j[0]["algorithm"], "Ring");
  EXPECT_EQ(j[0]["protocol"], "Simple");
  EXPECT_EQ(j[0]["channels"], 16);
  EXPECT_NEAR(j[0]["time_us"].get<double>(), 5427.0, 2.0);

  j = rows(sc + " --op all_gather -d bfloat16 -b 64M -e 64M");
  EXPECT_EQ(j[0]["size_bytes"], std::int64_t{64} << 20);
  EXPECT_EQ(j[0]["count"], (std::int64_t{4} << 20) / 2);  // per-rank count
  EXPECT_EQ(j[0]["algorithm"], "Ring");
  EXPECT_NEAR(j[0]["time_us"].get<double>(), 233.8, 0.1);
  EXPECT_NEAR(j[0]["busbw_GBps"].get<double>(), j[0]["algbw_GBps"].get<double>() * 15.0 / 16.0, 1e-9);

  j = rows(sc + " --op all_reduce -d bfloat16 -b 8K -e 8K");
  EXPECT_EQ(j[0]["algorithm"], "Tree");
  EXPECT_EQ(j[0]["protocol"], "LL");
  EXPECT_EQ(j[0]["channels"], 2);
  EXPECT_NEAR(j[0]["time_us"].get<double>(), 25.9, 0.05);
}

TEST(NcclTestCli, SetGpusAndTextTable) {
  const std::string sc = two_node_h100();
  auto j = rows(sc + " -b 256M -e 256M --set nccl.NCCL_ALGO=Ring");
  EXPECT_EQ(j[0]["algorithm"], "Ring");
  j = rows(sc + " -b 256M -e 256M --gpus 8");  // one node: NVLS, no network
  EXPECT_EQ(j[0]["algorithm"], "NVLS");
  j = rows(sc + " --op broadcast -r 3 -b 1M -e 1M");
  EXPECT_EQ(j[0]["root"], 3);
  EXPECT_EQ(j[0]["busbw_GBps"], j[0]["algbw_GBps"]);

  const Result r = run("nccl-test " + sc + " -b 8 -e 1M -f 4");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("#       size         count"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Avg bus bandwidth"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("16 x H100"), std::string::npos) << r.out;
}

TEST(NcclTestCli, BadFlagsNameTheFlag) {
  const std::string sc = two_node_h100();
  const std::pair<std::string, std::string> cases[] = {{"--op allreduce", "--op"},
                                                       {"-d float17", "-d"},
                                                       {"-o xor", "-o"},
                                                       {"-b 1X", "-b"},
                                                       {"-b 1M -e 1K", "-e"},
                                                       {"-f 1", "-f"},
                                                       {"--gpus 12", "--gpus"},
                                                       {"--gpus 0", "--gpus"},
                                                       {"--op reduce -r 16", "-r"},
                                                       {"--set nccl.NCCL_ALGO=Rong", "NCCL_ALGO"},
                                                       {"-m 0", "-m"}};
  for (const auto& [args, key] : cases) {
    const Result r = run("nccl-test " + sc + " " + args);
    EXPECT_EQ(r.status, 1) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(key), std::string::npos) << args << "\n" << r.out;
  }
}

// -m N (nccl-tests' aggregated iterations): N calls per NCCL group, chosen on the aggregate
// (NCCL src/enqueue.cc ncclPrepareTasks); times are per operation. 16 × 8 KiB = one 128 KiB call's choice,
// divided by 16.
TEST(NcclTestCli, AggregatedIterationsShareTheLatency) {
  const std::string sc = two_node_h100();
  const auto lone = rows(sc + " -b 8K -e 8K");
  const auto grouped = rows(sc + " -b 8K -e 8K -m 16");
  const auto aggregate = rows(sc + " -b 128K -e 128K");
  EXPECT_NEAR(grouped[0]["time_us"].get<double>(), aggregate[0]["time_us"].get<double>() / 16, 1e-9);
  EXPECT_EQ(grouped[0]["algorithm"], aggregate[0]["algorithm"]);
  EXPECT_LT(grouped[0]["time_us"].get<double>(), lone[0]["time_us"].get<double>() / 4);
  EXPECT_EQ(grouped[0]["size_bytes"], 8192);  // the size column stays one operation's
}

// NCCL_TOPO_FILE: the DGX-H100 node of the worked example read from XML gives the worked example's
// choices; a file that does not match the cluster, or is not a topology, is an error naming the key.
TEST(NcclTestCli, TopologyFileFromTheScenario) {
  const std::string xml = std::string(TRAINSIM_SOURCE_DIR) + "/data/topologies/dgx-h100.xml";
  const std::string sc =
      temp_file("nccl_test_topo.yaml",
                "cluster: {gpu: H100-SXM, num_gpus: 16, gpus_per_node: 8, nics_per_node: 8, nic_gbps: 400}\n"
                "collective: {op: all_reduce}\nnccl: {NCCL_TOPO_FILE: " +
                    xml + "}\n");
  auto j = rows(sc + " -d bfloat16 -b 1G -e 1G --set nccl.NCCL_NVLS_ENABLE=0");
  EXPECT_EQ(j[0]["algorithm"], "Ring");
  EXPECT_NEAR(j[0]["time_us"].get<double>(), 5427.0, 2.0);

  Result r = run("nccl-test " + sc + " --set cluster.gpus_per_node=4 --set cluster.num_gpus=16");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("nccl.NCCL_TOPO_FILE"), std::string::npos) << r.out;
  const std::string junk = temp_file("nccl_test_junk.xml", "<system version=\"1\"><cpu><pci busid=\"zz\"/></cpu>");
  r = run("nccl-test " + sc + " --set nccl.NCCL_TOPO_FILE=" + junk);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("nccl.NCCL_TOPO_FILE"), std::string::npos) << r.out;
  r = run("nccl-test " + sc + " --set nccl.NCCL_TOPO_FILE=/nonexistent/topo.xml");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("/nonexistent/topo.xml"), std::string::npos) << r.out;
}

// nccl.NCCL_DEBUG=INFO: NCCL's own log lines for the test's communicator on stderr, before the table.
TEST(NcclTestCli, NcclDebugInfoPrintsNcclsLogLines) {
  const std::string args = "nccl-test " + example("gpt3-175b-1024-h100.yaml") + " -b 1M -e 1M --gpus 16";
  const Result quiet = run(args);
  ASSERT_EQ(quiet.status, 0) << quiet.out;
  EXPECT_EQ(quiet.out.find("NCCL INFO"), std::string::npos);
  // stderr only: the group sends the binary's stdout to /dev/null and its stderr down the pipe.
  const Result info =
      run_shell("{ " + std::string(TRAINSIM_BINARY) + " " + args +
                " --set nccl.NCCL_DEBUG=INFO --set nccl.NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING 2>&1 >/dev/null; }");
  ASSERT_EQ(info.status, 0) << info.out;
  EXPECT_NE(info.out.find("trainsim:0:0 [0] NCCL INFO Pattern 4, crossNic"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("NCCL INFO Channel 00/"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("NCCL INFO     AllReduce |"), std::string::npos) << info.out;
  EXPECT_EQ(info.out.find("Avg bus bandwidth"), std::string::npos) << "the table stays on stdout";
  const Result bad = run(args + " --set nccl.NCCL_DEBUG_SUBSYS=GRAF --set nccl.NCCL_DEBUG=INFO");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.out.find("nccl.NCCL_DEBUG_SUBSYS"), std::string::npos) << bad.out;
}

// trainsim run with nccl.NCCL_DEBUG=INFO: each distinct communicator's NCCL log on stderr, stdout unchanged.
TEST(NcclDebugCli, RunPrintsEachCommunicatorsLogOnStderr) {
  const std::string base = std::string(TRAINSIM_BINARY) + " run " + example("tiny-8-h100.yaml") + " --json --no-timing";
  const Result plain = run_shell("{ " + base + " 2>/dev/null; }");
  const Result with_log = run_shell("{ " + base + " --set nccl.NCCL_DEBUG=INFO 2>/dev/null; }");
  ASSERT_EQ(with_log.status, 0) << with_log.out;
  EXPECT_EQ(with_log.out, plain.out);
  const Result log = run_shell("{ " + base + " --set nccl.NCCL_DEBUG=INFO 2>&1 >/dev/null; }");
  EXPECT_NE(log.out.find("# trainsim: the tp communicator of 2 ranks (0,1)"), std::string::npos) << log.out;
  EXPECT_NE(log.out.find("trainsim:0:0 [0] NCCL INFO Channel 00/"), std::string::npos) << log.out;
  EXPECT_EQ(log.out.find("Pattern"), std::string::npos) << "GRAPH is not in NCCL's default subsystems";
  // A graph dump is nccl-test's: a run says it writes none rather than ignoring the setting.
  const Result dump =
      run_shell("{ " + base + " --set nccl.NCCL_GRAPH_DUMP_FILE=/tmp/trainsim_graphs.xml 2>/dev/null; }");
  EXPECT_NE(dump.out.find("\"key\": \"nccl.NCCL_GRAPH_DUMP_FILE\""), std::string::npos) << dump.out;
}
