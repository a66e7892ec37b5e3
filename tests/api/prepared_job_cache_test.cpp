// PreparedJobCache: runs whose scenarios differ only in keys the network reads (network_only_key) share the
// workload, memory and compute models, and (analytical) the simulation of a run whose collectives' estimates all
// came out as an earlier run's. A reused job or simulation must give exactly the result of a fresh build, and a
// change to any other key must build afresh.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenario/scenario_loader.hpp"
#include "trainsim/report.hpp"
#include "trainsim/trainsim.hpp"

using namespace trainsim;

namespace {

// GPT-3 1.3B on four 8-GPU nodes, TP 2 x PP 2 x DP 8, overlapped DP: network keys move the iteration time.
const char* kJob = R"(
model: {preset: gpt3-1.3b}
training: {global_batch_size: 64, micro_batch_size: 2}
parallelism: {tensor: 2, pipeline: 2, overlap_grad_reduce: true}
cluster: {gpu: H100-SXM, num_gpus: 32, gpus_per_node: 8, nics_per_node: 8, nic_gbps: 100}
)";

std::string result_json(const std::vector<std::string>& overrides, PreparedJobCache* reuse) {
  RunOptions options;
  options.reuse = reuse;
  RunOutput out = run_scenario(parse_scenario(kJob, "job.yaml", overrides), options);
  out.result.simulation.wall_s = 0;
  return to_json(out.result).dump();
}

// Each is a key network_only_key names, at a value other than the base's.
const std::vector<std::vector<std::string>> kNetworkChanges = {
    {"cluster.nic_gbps=25"},
    {"cluster.network.topology=fat-tree", "cluster.network.oversubscription=8"},
    {"cluster.network.topology=fat-tree", "cluster.network.switch_radix=16", "cluster.network.tiers=3"},
    {"cluster.network.link_latency_ns=20000"},
    {"nccl.NCCL_ALGO=Tree"},
    {"nccl.NCCL_MAX_NCHANNELS=2"},
    {"algorithms.all_reduce=halving_doubling"},
    {"simulation.seed=7"},
};

TEST(PreparedJobCache, NetworkKeysReuseTheJobAndGiveTheFreshResult) {
  for (const char* model : {"analytical", "flow"}) {
    const std::string base = std::string("simulation.network_model=") + model;
    PreparedJobCache cache;
    const std::string first = result_json({base}, &cache);
    EXPECT_EQ(cache.reused(), 0);
    EXPECT_EQ(first, result_json({base}, nullptr));
    int expected_reuses = 0;
    for (std::vector<std::string> change : kNetworkChanges) {
      change.insert(change.begin(), base);
      const std::string cached = result_json(change, &cache);
      EXPECT_EQ(cache.reused(), ++expected_reuses) << model << " " << change.back();
      EXPECT_EQ(cached, result_json(change, nullptr)) << model << " " << change.back();
    }
  }
}

TEST(PreparedJobCache, TheChangesAreSeenByTheRun) {
  // The reuse test above would pass trivially if its changes did not move the result: each moves it at one network
  // level at least (the ECMP seed on this symmetric fabric moves nothing, and is left out).
  const std::string analytical = result_json({}, nullptr);
  const std::string flow = result_json({"simulation.network_model=flow"}, nullptr);
  for (std::vector<std::string> change : kNetworkChanges) {
    if (change.front() == "simulation.seed=7") continue;
    const bool moves_analytical = result_json(change, nullptr) != analytical;
    change.insert(change.begin(), "simulation.network_model=flow");
    const bool moves_flow = result_json(change, nullptr) != flow;
    EXPECT_TRUE(moves_analytical || moves_flow) << change.back();
  }
}

TEST(PreparedJobCache, OtherKeysBuildAfresh) {
  PreparedJobCache cache;
  result_json({}, &cache);
  for (const char* change :
       {"training.micro_batch_size=1", "parallelism.tensor=4", "cluster.gpu=A100-SXM-80GB",
        "compute.interference=false", "cluster.scale_up.bandwidth_GBps=300", "simulation.network_model=flow"}) {
    const std::string cached = result_json({change}, &cache);
    EXPECT_EQ(cache.reused(), 0) << change;
    EXPECT_EQ(cached, result_json({change}, nullptr)) << change;
  }
}

// The ECMP seed moves no analytical estimate: the second run takes the first one's simulation. A NIC speed that moves
// the estimates simulates afresh; flow-level runs always do. Every result is the fresh run's.
TEST(PreparedJobCache, ARunWhoseEstimatesAreAllAsBeforeTakesThatSimulation) {
  PreparedJobCache cache;
  const std::string first = result_json({}, &cache);
  EXPECT_EQ(cache.simulations_reused(), 0);
  EXPECT_EQ(result_json({"simulation.seed=7"}, &cache), first);
  EXPECT_EQ(cache.simulations_reused(), 1);
  EXPECT_EQ(result_json({"cluster.nic_gbps=25"}, &cache), result_json({"cluster.nic_gbps=25"}, nullptr));
  EXPECT_EQ(cache.simulations_reused(), 1);
  // The one before is still kept: back to the first speed, its simulation again.
  EXPECT_EQ(result_json({"simulation.seed=3"}, &cache), first);
  EXPECT_EQ(cache.simulations_reused(), 2);

  PreparedJobCache flow_cache;
  result_json({"simulation.network_model=flow"}, &flow_cache);
  result_json({"simulation.network_model=flow", "simulation.seed=7"}, &flow_cache);
  EXPECT_EQ(flow_cache.reused(), 1);
  EXPECT_EQ(flow_cache.simulations_reused(), 0);
}

// A sweep of NIC speeds: below ~384 Gb/s each speed moves this job's estimates, from there on the NICs no longer
// limit any collective and every speed gives the same ones. Every point still gives its fresh result.
TEST(PreparedJobCache, ASweepOfNicSpeedsReusesSimulationsAndMatchesFreshRuns) {
  PreparedJobCache cache;
  int points = 0;
  for (int gbps = 360; gbps < 400; gbps += 2, ++points) {
    const std::vector<std::string> change = {"cluster.nic_gbps=" + std::to_string(gbps)};
    EXPECT_EQ(result_json(change, &cache), result_json(change, nullptr)) << gbps;
  }
  EXPECT_GE(cache.simulations_reused(), 5);
  EXPECT_LT(cache.simulations_reused(), points - 5);  // and the slower speeds did move the estimates
}

}  // namespace
