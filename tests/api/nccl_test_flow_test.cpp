// nccl-test on the scenario's network model: at flow level the collective's flows run on the fabric, so a tapered
// fabric and a dead NIC show in the bus bandwidth, where the analytical NCCL model sees neither; inside one
// scale-up domain both give the model's time.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim {
namespace {

NcclTestRow one_row(std::vector<std::string> overrides, CollectiveOp op, int gpus, std::int64_t bytes) {
  const Scenario s = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/gpt3-175b-1024-h100.yaml", overrides);
  NcclTestOptions o;
  o.op = op;
  o.min_bytes = o.max_bytes = bytes;
  o.gpus = gpus;
  const NcclTestTable t = run_nccl_test(s, o);
  EXPECT_EQ(t.network_model, s.simulation.network_model == NetworkModel::Flow ? "flow" : "analytical");
  EXPECT_EQ(t.rows.size(), 1u);
  return t.rows.front();
}

const std::vector<std::string> kFatTree = {"cluster.network.topology=fat-tree"};

std::vector<std::string> with(std::vector<std::string> v, const std::string& extra) {
  v.push_back(extra);
  return v;
}

// Four nodes on leaves of 16 ports: with a 4:1 taper each leaf holds one node (13 down, 3 up).
TEST(NcclTestFlow, ATaperedFabricSlowsAnAllToAllOnlyAtFlowLevel) {
  const std::int64_t bytes = 64 << 20;
  const int gpus = 32;
  const auto flat = with(with(kFatTree, "cluster.network.switch_radix=16"), "cluster.network.oversubscription=1");
  const auto tapered = with(with(kFatTree, "cluster.network.switch_radix=16"), "cluster.network.oversubscription=4");
  const double model_flat = one_row(flat, CollectiveOp::AllToAll, gpus, bytes).busbw_GBps;
  const double model_tapered = one_row(tapered, CollectiveOp::AllToAll, gpus, bytes).busbw_GBps;
  EXPECT_DOUBLE_EQ(model_flat, model_tapered);  // the NCCL model prices from the NICs, blind to the fabric
  const double flow_flat =
      one_row(with(flat, "simulation.network_model=flow"), CollectiveOp::AllToAll, gpus, bytes).busbw_GBps;
  const double flow_tapered =
      one_row(with(tapered, "simulation.network_model=flow"), CollectiveOp::AllToAll, gpus, bytes).busbw_GBps;
  // Full bisection: the flows reach about the NIC-limited rate the model gives.
  EXPECT_NEAR(flow_flat / model_flat, 1.0, 0.1);
  // 4:1 at the leaves: most of an all-to-all's traffic leaves its leaf, so it gets about a quarter to a third.
  EXPECT_LT(flow_tapered, 0.4 * flow_flat);
  EXPECT_GT(flow_tapered, 0.2 * flow_flat);
}

TEST(NcclTestFlow, ADeadNicSlowsTheCollectiveAtFlowLevel) {
  const auto flow = with(kFatTree, "simulation.network_model=flow");
  const double healthy = one_row(flow, CollectiveOp::AllToAll, 32, 64 << 20).busbw_GBps;
  const double broken = one_row(with(flow, "faults=[{kind: nic_down, node: 0, nic: 0, always: true}]"),
                                CollectiveOp::AllToAll, 32, 64 << 20)
                            .busbw_GBps;
  // Node 0's traffic on NIC 0 moves to another NIC, which then carries twice its share: the call waits for it.
  EXPECT_NEAR(broken / healthy, 0.5, 0.05);
}

TEST(NcclTestFlow, InsideOneNodeFlowAndModelAgree) {
  const NcclTestRow model = one_row({}, CollectiveOp::AllReduce, 8, 256 << 20);
  const NcclTestRow flow = one_row({"simulation.network_model=flow"}, CollectiveOp::AllReduce, 8, 256 << 20);
  EXPECT_EQ(flow.time_us, model.time_us);
  EXPECT_EQ(flow.algorithm, model.algorithm);
}

TEST(NcclTestFlow, AFaultOnALinkTheTestFabricLacksNamesTheKey) {
  try {
    one_row({"simulation.network_model=flow", "faults=[{kind: nic_down, node: 100, nic: 0, always: true}]"},
            CollectiveOp::AllReduce, 16, 1 << 20);
    ADD_FAILURE() << "not refused";
  } catch (const ScenarioError& e) { EXPECT_EQ(e.key(), "faults[0].node") << e.what(); }
}

}  // namespace
}  // namespace trainsim
