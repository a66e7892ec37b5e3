// The workload fingerprint (scenario/workload_fingerprint.cpp) leaves out exactly the keys network_only_key names,
// so two scenarios share one when they differ only in those (tests/api/prepared_job_cache_test.cpp checks that
// such scenarios do build the same job).
#include <string>

#include "scenario/key_table.hpp"
#include "scenario/workload_fingerprint.hpp"
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::kValidScenario;

std::string fingerprint(const std::vector<std::string>& overrides) {
  return parse_scenario(kValidScenario, "s.yaml", overrides).workload_fingerprint;
}

TEST(NetworkOnlyKey, NamesTheNetworksKeysAndNoOthers) {
  for (const char* key : {"cluster.nic_gbps", "cluster.network.tiers", "cluster.network.roce.ecn_pmax",
                          "nccl.NCCL_ALGO", "algorithms.reduction_server.servers", "simulation.seed"})
    EXPECT_TRUE(network_only_key(key)) << key;
  for (const char* key : {"cluster.network.simai_topology", "cluster.num_gpus", "cluster.gpus_per_node",
                          "cluster.scale_up.bandwidth_GBps", "simulation.network_model", "simulation.per_rank",
                          "model.num_layers", "faults[0].link", "compute.interference", "cluster.nic_gbps_x"})
    EXPECT_FALSE(network_only_key(key)) << key;
}

TEST(NetworkOnlyKey, EveryDeclaredNetworkKeyIsAClusterNcclAlgorithmsOrSeedKey) {
  int count = 0;
  for (const ScenarioKey& k : scenario_keys()) {
    if (!network_only_key(k.path)) continue;
    ++count;
    const std::string_view p = k.path;
    EXPECT_TRUE(p.starts_with("cluster.") || p.starts_with("nccl.") || p.starts_with("algorithms.") ||
                p == "simulation.seed")
        << p;
  }
  EXPECT_GE(count, 20);  // the fabric's, RoCE's, NCCL's and the algorithms' keys
}

TEST(WorkloadFingerprint, EqualWhenOnlyNetworkKeysDiffer) {
  const std::string base = fingerprint({});
  EXPECT_FALSE(base.empty());
  EXPECT_EQ(base, fingerprint({"cluster.nic_gbps=100"}));
  EXPECT_EQ(base, fingerprint({"cluster.network.oversubscription=2", "nccl.NCCL_ALGO=Ring", "simulation.seed=3"}));
}

TEST(WorkloadFingerprint, DiffersWhenAnyOtherKeyDiffers) {
  const std::string base = fingerprint({});
  for (const char* change :
       {"training.micro_batch_size=1", "parallelism.tensor=4", "cluster.gpu=A100-SXM-80GB", "cluster.num_gpus=32",
        "simulation.network_model=flow", "compute.host_launch_us=5", "model.seq_length=4096"})
    EXPECT_NE(base, fingerprint({change})) << change;
}

TEST(WorkloadFingerprint, ReadsTheStructureNotJustTheText) {
  using scenario_detail::workload_fingerprint;
  // Keys and values that run together the same way must not collide, nor a list with a scalar.
  EXPECT_NE(workload_fingerprint(YAML::Load("{a: bc}")), workload_fingerprint(YAML::Load("{ab: c}")));
  EXPECT_NE(workload_fingerprint(YAML::Load("{a: [1, 2]}")), workload_fingerprint(YAML::Load("{a: [12]}")));
  EXPECT_NE(workload_fingerprint(YAML::Load("{a: [1]}")), workload_fingerprint(YAML::Load("{a: 1}")));
  // Mapping order is not meaning; a mapping of nothing but network keys is as if absent.
  EXPECT_EQ(workload_fingerprint(YAML::Load("{a: 1}")),
            workload_fingerprint(YAML::Load("{a: 1, nccl: {NCCL_ALGO: Ring}}")));
  EXPECT_EQ(workload_fingerprint(YAML::Load("{a: 1, b: 2}")), workload_fingerprint(YAML::Load("{b: 2, a: 1}")));
}

}  // namespace
}  // namespace trainsim
