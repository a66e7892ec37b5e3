// Bad input to the flow network (only trainsim's own code calls it) is a trainsim::InternalError that
// says what is wrong, never a crash nor a user-facing Error, and a rejected call leaves the network as
// it was.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "network/flow/flow_dag_runner.hpp"
#include "network_test_support.hpp"
#include "support/error_of.hpp"

namespace trainsim {
namespace {

using test::error_of;
using ::testing::HasSubstr;
using testing::kGB;
using testing::kGBps;
using testing::start_flow;

TEST(FlowNetworkErrors, ConstructionChecksEveryLink) {
  EXPECT_THAT(error_of<InternalError>([] {
                FlowNetwork({1, 2}, {0});
              }),
              HasSubstr("2 link capacities but 1 link latencies"));
  EXPECT_THAT(error_of<InternalError>([] { FlowNetwork({1, -2}, {0, 0}); }), HasSubstr("link 1 capacity -2 B/s"));
  EXPECT_THAT(error_of<InternalError>([] { FlowNetwork({NAN}, {0}); }), HasSubstr("link 0 capacity nan B/s"));
  EXPECT_THAT(error_of<InternalError>([] { FlowNetwork({1}, {-5}); }), HasSubstr("link 0 latency -5 ps is negative"));
}

TEST(FlowNetworkErrors, BadFlowsAreRejectedWithoutSideEffects) {
  FlowNetwork net({10 * kGBps, 10 * kGBps}, {0, 0});
  EXPECT_THAT(error_of<InternalError>([&] { start_flow(net, 0, {0}, -1); }), HasSubstr("flow bytes -1 is negative"));
  EXPECT_THAT(error_of<InternalError>([&] { start_flow(net, 0, {}, kGB); }), HasSubstr("empty path"));
  EXPECT_THAT(error_of<InternalError>([&] {
                start_flow(net, 0, {0, 2}, kGB);
              }),
              HasSubstr("start: unknown link id 2 (the network has links 0..1)"));
  EXPECT_THAT(error_of<InternalError>([&] { start_flow(net, 0, {-1}, kGB); }), HasSubstr("unknown link id -1"));
  EXPECT_THAT(error_of<InternalError>([&] {
                start_flow(net, 0, {1, 0, 1}, kGB);
              }),
              HasSubstr("path crosses link 1 twice"));
  EXPECT_THAT(error_of<InternalError>([&] { start_flow(net, 0, {0}, kGB, 0); }), HasSubstr("rate cap 0 B/s"));
  EXPECT_THAT(error_of<InternalError>([&] { start_flow(net, 0, {0}, kGB, NAN); }), HasSubstr("rate cap nan B/s"));
  EXPECT_EQ(net.active_flows(), 0u);
  EXPECT_EQ(net.next_completion(), kNever);
  // The network still works after the rejections.
  const FlowId f = start_flow(net, 0, {0, 1}, kGB);
  EXPECT_EQ(net.rate(f), 10 * kGBps);
}

TEST(FlowNetworkErrors, BadCoflowWeightsAreRejectedWithoutSideEffects) {
  FlowNetwork net({10 * kGBps, 10 * kGBps}, {0, 0});
  const std::vector<LinkId> path{0, 1};
  auto start = [&](std::vector<float> w) { net.start(0, path, w, kGB); };
  EXPECT_THAT(error_of<InternalError>([&] { start({1.0F}); }), HasSubstr("1 hop weights for a path of 2 links"));
  EXPECT_THAT(error_of<InternalError>([&] { start({1.0F, 0.0F}); }), HasSubstr("hop weight 0; expected a finite"));
  EXPECT_THAT(error_of<InternalError>([&] { start({-2.0F, 1.0F}); }), HasSubstr("hop weight -2"));
  EXPECT_THAT(error_of<InternalError>([&] { start({NAN, 1.0F}); }), HasSubstr("hop weight nan"));
  EXPECT_THAT(error_of<InternalError>([&] {
                const std::vector<LinkId> twice{1, 1};
                net.start(0, twice, std::vector<float>{1.0F, 1.0F}, kGB);
              }),
              HasSubstr("path crosses link 1 twice"));
  EXPECT_EQ(net.active_flows(), 0u);
  const FlowId f = net.start(0, path, std::vector<float>{2.0F, 0.5F}, kGB);
  EXPECT_EQ(net.rate(f), 5 * kGBps);
}

TEST(FlowNetworkErrors, TimeNeverGoesBackwards) {
  FlowNetwork net({10 * kGBps}, {0});
  std::vector<FlowId> finished;
  net.advance(1000, finished);
  EXPECT_THAT(error_of<InternalError>([&] { net.advance(999, finished); }),
              HasSubstr("advance to 999 ps is before the current time 1000 ps"));
  EXPECT_THAT(error_of<InternalError>([&] { start_flow(net, 5, {0}, kGB); }), HasSubstr("start at 5 ps is before"));
  EXPECT_THAT(error_of<InternalError>([&] { net.set_capacity(0, 1, 5); }), HasSubstr("set_capacity at 5 ps is before"));
}

TEST(FlowNetworkErrors, CapacityChangesAndQueriesCheckTheirIds) {
  FlowNetwork net({10 * kGBps}, {0});
  EXPECT_THAT(error_of<InternalError>([&] { net.set_capacity(3, 1, 0); }),
              HasSubstr("set_capacity: unknown link id 3"));
  EXPECT_THAT(error_of<InternalError>([&] { net.set_capacity(0, -1, 0); }), HasSubstr("link 0 capacity -1 B/s"));
  EXPECT_THAT(error_of<InternalError>([&] { net.set_capacity(0, INFINITY, 0); }),
              HasSubstr("expected a finite number"));
  EXPECT_THAT(error_of<InternalError>([&] { net.rate(0); }), HasSubstr("rate: flow 0 is not active"));
  EXPECT_THAT(error_of<InternalError>([&] { net.remaining_bytes(-4); }), HasSubstr("flow -4 is not active"));
  EXPECT_THAT(error_of<InternalError>([&] { net.capacity(1); }), HasSubstr("capacity: unknown link id 1"));
  const std::vector<LinkId> path{0, 9};
  EXPECT_THAT(error_of<InternalError>([&] { net.path_latency(path); }), HasSubstr("path_latency: unknown link id 9"));
}

TEST(FlowDagRunnerErrors, MalformedDagsNameTheTransfer) {
  FlowNetwork net({10 * kGBps}, {0});
  const std::vector<LinkId> p0{0}, p5{5};
  {
    TransferDag dag;
    dag.add(p0, kGB, 0);
    dag.add(p0, kGB, 0);
    dag.dep_index.push_back(1);
    dag.transfers[1].dep_end = 1;  // transfer 1 depends on itself
    EXPECT_THAT(error_of<InternalError>([&] { run_flow_dag(net, dag); }),
                HasSubstr("transfer 1 depends on transfer 1; dependencies must be earlier transfers"));
  }
  {
    TransferDag dag;
    dag.add(p5, kGB, 0);
    EXPECT_THAT(error_of<InternalError>([&] { run_flow_dag(net, dag); }), HasSubstr("transfer 0: unknown link id 5"));
  }
  {
    TransferDag dag;
    dag.add(p0, kGB, -1);
    EXPECT_THAT(error_of<InternalError>([&] { run_flow_dag(net, dag); }),
                HasSubstr("transfer 0: latency -1 ps is negative"));
  }
  {
    TransferDag dag;
    dag.add(p0, -3, 0);
    EXPECT_THAT(error_of<InternalError>([&] { run_flow_dag(net, dag); }),
                HasSubstr("transfer 0: bytes -3 is negative"));
  }
  {
    TransferDag dag;
    dag.add({}, kGB, 0);
    EXPECT_THAT(error_of<InternalError>([&] { run_flow_dag(net, dag); }), HasSubstr("transfer 0: empty path"));
  }
  {
    TransferDag dag;
    dag.add(p0, kGB, 0);
    dag.transfers[0].path_end = 4;
    EXPECT_THAT(error_of<InternalError>([&] { run_flow_dag(net, dag); }),
                HasSubstr("path range [0, 4) is outside the 1 path links"));
  }
  {
    TransferDag dag;
    dag.add(p0, kGB, 0);
    const std::vector<CapacityChange> bad{{0, 2, 1}};
    EXPECT_THAT(error_of<InternalError>([&] { run_flow_dag(net, dag, bad); }),
                HasSubstr("capacity change 0: unknown link id 2"));
  }
  EXPECT_EQ(net.active_flows(), 0u);  // nothing was started by a rejected DAG
}

}  // namespace
}  // namespace trainsim
