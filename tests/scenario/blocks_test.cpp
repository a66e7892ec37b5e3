// nccl, simulation, output, faults, reference and collective blocks.
#include "scenario/sections.hpp"
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

TEST(Blocks, NcclValuesAreKeptAsStrings) {
  const Scenario s =
      parse_scenario(edit(kValidScenario, "nccl",
                          "{NCCL_ALGO: Ring, NCCL_P2P_PXN_LEVEL: 2, NCCL_MAX_NCHANNELS: null, NCCL_NVLS_ENABLE: 0}"),
                     "test.yaml");
  EXPECT_EQ(s.nccl.get("NCCL_ALGO"), "Ring");
  EXPECT_EQ(s.nccl.get("NCCL_P2P_PXN_LEVEL"), "2");  // the environment holds strings
  EXPECT_EQ(s.nccl.get("NCCL_NVLS_ENABLE"), "0");
  EXPECT_FALSE(s.nccl.get("NCCL_MAX_NCHANNELS").has_value());  // null = NCCL's own choice
  EXPECT_FALSE(s.nccl.get("NCCL_PROTO").has_value());
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "nccl", "{NCCL_ALGO: [Ring, Tree]}"), "nccl.NCCL_ALGO", "got a list");
}

TEST(Blocks, SimulationAndOutput) {
  std::string yaml =
      edit(kValidScenario, "simulation", "{network_model: packet, seed: 42, threads: 0, per_rank: true}");
  yaml = edit(yaml, "output", "{trace: out/trace.json, csv: null}");
  const Scenario s = parse_scenario(yaml, "test.yaml");
  EXPECT_EQ(s.simulation.network_model, NetworkModel::Packet);
  EXPECT_EQ(s.simulation.seed, 42u);
  EXPECT_EQ(s.simulation.threads, 0);
  EXPECT_TRUE(s.simulation.per_rank);
  EXPECT_EQ(s.output.trace, "out/trace.json");
  EXPECT_FALSE(s.output.csv.has_value());
}

TEST(Blocks, EveryFaultKind) {
  const Scenario s = parse_scenario(edit(kValidScenario, "faults", R"([
      {kind: link_down, link: "node0/nic3-leaf3", at_s: 5},
      {kind: link_degraded, link: "leaf0-spine1", factor: 0.5, always: true},
      {kind: nic_down, node: 1, nic: 7, at_s: 0},
      {kind: gpu_slow, rank: 15, factor: 0.7, always: true},
      {kind: node_down, node: 0, at_s: 12.5}])"),
                                    "test.yaml");
  ASSERT_EQ(s.faults.size(), 5u);
  EXPECT_EQ(s.faults[0].kind, FaultKind::LinkDown);
  EXPECT_EQ(s.faults[0].link, "node0/nic3-leaf3");
  EXPECT_EQ(s.faults[0].at_s, 5.0);
  EXPECT_EQ(s.faults[1].kind, FaultKind::LinkDegraded);
  EXPECT_DOUBLE_EQ(s.faults[1].factor, 0.5);
  EXPECT_FALSE(s.faults[1].at_s.has_value());  // always
  EXPECT_EQ(s.faults[2].kind, FaultKind::NicDown);
  EXPECT_EQ(s.faults[2].node, 1);
  EXPECT_EQ(s.faults[2].nic, 7);
  EXPECT_EQ(s.faults[3].kind, FaultKind::GpuSlow);
  EXPECT_EQ(s.faults[3].rank, 15);
  EXPECT_EQ(s.faults[4].kind, FaultKind::NodeDown);
  EXPECT_EQ(s.faults[4].at_s, 12.5);
}

TEST(Blocks, FaultErrors) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "faults", "[{kind: node_down, node: 0}]"), "faults[0].at_s",
                        "missing required key faults[0].at_s", "always: true");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "faults", "[{kind: node_down, node: 0, at_s: 1, always: true}]"),
                        "faults[0].at_s", "not both");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "faults", "[{kind: gpu_slow, factor: 2, always: true}]"), "faults[0].rank",
                        "missing required key faults[0].rank");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "faults", "[{kind: node_down, node: 0, factor: 2, always: true}]"),
                        "faults[0].factor", "does not apply to a node_down fault");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "faults", "[{kind: meteor, always: true}]"), "faults[0].kind",
                        "link_down | link_degraded | nic_down | gpu_slow | node_down");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "faults", "[{kind: node_down, node: 0, at_s: -1}]"), "faults[0].at_s",
                        "expected a non-negative number");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "faults", "[3]"), "faults[0]", "expected a mapping");
}

TEST(Blocks, Reference) {
  const Scenario s = parse_scenario(
      edit(kValidScenario, "reference",
           "{source: 'Paper, Table 1', confidence: high, iteration_time_s: 13.9, tflops_per_gpu: 148, mfu: 0.47, "
           "flops_convention: hardware, notes: 'assumed x'}"),
      "test.yaml");
  ASSERT_TRUE(s.reference.has_value());
  EXPECT_EQ(s.reference->source, "Paper, Table 1");
  EXPECT_EQ(s.reference->confidence, "high");
  EXPECT_EQ(s.reference->iteration_time_s, 13.9);
  EXPECT_EQ(s.reference->mfu, 0.47);
  EXPECT_FALSE(s.reference->hfu.has_value());
  EXPECT_EQ(s.reference->flops_convention, FlopsConvention::Hardware);
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "reference", "{confidence: certain}"), "reference.confidence",
                        "high | medium | low");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "reference", "{mfu: 47}"), "reference.mfu", "between 0 and 1");
}

TEST(Blocks, CollectiveOnlyCase) {
  const Scenario s = parse_scenario(R"(
cluster: {gpu: H100-SXM, num_gpus: 8}
nccl: {NCCL_ALGO: NVLS}
collective:
  op: all_reduce
  tool: nccl-tests
  library: NCCL 2.21
  points:
    - {size: 8, busbw_GBps: 0.1}
    - {size: 64K, busbw_GBps: 10}
    - {size: 1M, busbw_GBps: 100, algbw_GBps: 57, nccl_algo: Ring}
    - {size: 8G, busbw_GBps: 480}
    - {size: null, busbw_GBps: 300}
)",
                                    "coll.yaml");
  EXPECT_FALSE(s.has_training_job);
  ASSERT_TRUE(s.collective.has_value());
  EXPECT_EQ(s.collective->op, CollectiveOp::AllReduce);
  EXPECT_EQ(s.collective->library, "NCCL 2.21");
  ASSERT_EQ(s.collective->points.size(), 5u);
  // Suffixes are powers of 1024, as in nccl-tests' -b/-e.
  EXPECT_EQ(s.collective->points[0].size, 8);
  EXPECT_EQ(s.collective->points[1].size, 64 * 1024);
  EXPECT_EQ(s.collective->points[2].size, 1024 * 1024);
  EXPECT_EQ(s.collective->points[3].size, 8LL * 1024 * 1024 * 1024);
  EXPECT_FALSE(s.collective->points[4].size.has_value());
  EXPECT_EQ(s.collective->points[2].algbw_GBps, 57.0);
  EXPECT_EQ(s.collective->points[2].nccl_algo, "Ring");
}

TEST(Blocks, CollectiveErrors) {
  const std::string base = "cluster: {gpu: H100-SXM, num_gpus: 8}\n";
  EXPECT_SCENARIO_ERROR(base + "collective: {op: allreduce}\n", "collective.op", "all_reduce | all_gather",
                        "did you mean all_reduce?");
  EXPECT_SCENARIO_ERROR(base + "collective: {op: all_reduce, points: [{size: 1.5M, busbw_GBps: 1}]}\n",
                        "collective.points[0].size", "64K");
  EXPECT_SCENARIO_ERROR(base + "collective: {op: all_reduce, points: [{size: 1M}]}\n",
                        "collective.points[0].busbw_GBps", "missing required key");
}

TEST(Blocks, ByteSizes) {
  using trainsim::parse_byte_size;
  EXPECT_EQ(parse_byte_size("8"), 8);
  EXPECT_EQ(parse_byte_size("64k"), 65536);
  EXPECT_EQ(parse_byte_size("1MB"), 1048576);
  EXPECT_EQ(parse_byte_size("2G"), 2147483648LL);
  EXPECT_FALSE(parse_byte_size("").has_value());
  EXPECT_FALSE(parse_byte_size("M").has_value());
  EXPECT_FALSE(parse_byte_size("-1").has_value());
  EXPECT_FALSE(parse_byte_size("1X").has_value());
  EXPECT_FALSE(parse_byte_size("99999999999999999999").has_value());  // beyond 64 bits
  EXPECT_FALSE(parse_byte_size("9999999999T").has_value());           // 1e10 x 2^40 overflows
}

TEST(Blocks, TrainingJobPlusCollective) {
  // A file may carry both; it is then a training job with a collective block attached.
  const Scenario s = parse_scenario(edit(kValidScenario, "collective", "{op: alltoall}"), "test.yaml");
  EXPECT_TRUE(s.has_training_job);
  EXPECT_EQ(s.collective->op, CollectiveOp::AllToAll);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(Blocks, AlgorithmsChooseWhatRunsEachCollective) {
  using test::edit;
  using test::kValidScenario;
  Scenario s = parse_scenario(kValidScenario, "test.yaml");
  EXPECT_EQ(s.algorithms.all_reduce, CollectiveAlgorithm::Nccl);  // NCCL's own choice unless asked
  s = parse_scenario(edit(kValidScenario, "algorithms",
                          "{all_reduce: reduction_server, all_gather: hierarchical, "
                          "reduce_scatter: halving_doubling, "
                          "reduction_server: {servers: 8, nic_gbps: 200, latency_us: 5}}"),
                     "test.yaml");
  EXPECT_EQ(s.algorithms.all_reduce, CollectiveAlgorithm::ReductionServer);
  EXPECT_EQ(s.algorithms.all_gather, CollectiveAlgorithm::Hierarchical);
  EXPECT_EQ(s.algorithms.reduce_scatter, CollectiveAlgorithm::HalvingDoubling);
  EXPECT_EQ(s.algorithms.reduction_server.servers, 8);
  EXPECT_DOUBLE_EQ(s.algorithms.reduction_server.nic_gbps, 200);
  EXPECT_DOUBLE_EQ(s.algorithms.reduction_server.latency_us, 5);

  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "algorithms", "{all_reduce: butterfly}"), "algorithms.all_reduce",
                        "halving_doubling");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "algorithms", "{all_gather: reduction_server}"), "algorithms.all_gather",
                        "only runs all_reduce");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "algorithms", "{reduction_server: {nic_gbps: 0}}"),
                        "algorithms.reduction_server.nic_gbps", "");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "algorithms", "{alltoall: nccl}"), "algorithms.alltoall", "");
}

// A relative NCCL_TOPO_FILE is found next to the scenario.
TEST(Blocks, RelativeTopologyFileIsNextToTheScenario) {
  const Scenario s =
      parse_scenario(test::edit(test::kValidScenario, "nccl", "{NCCL_TOPO_FILE: topo/node.xml}"), "/data/run/job.yaml");
  EXPECT_EQ(s.nccl.get("NCCL_TOPO_FILE"), "/data/run/topo/node.xml");
}

}  // namespace
}  // namespace trainsim
