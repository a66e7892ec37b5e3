// Building a job's communicators ahead of its event loop on several threads (CollectiveModel::prepare): every
// communicator and tuning table comes out as the sequential, build-on-first-use path makes it, and an error is the
// one that path would throw.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collective/nccl/nccl_analytical_model.hpp"
#include "collective/nccl/nccl_debug_log.hpp"
#include "core/error.hpp"
#include "test_clusters.hpp"

namespace trainsim {
namespace {

// Four 8-GPU H100 nodes: a node's TP group, DP groups of one GPU per node on each local index (each its own NIC, so
// its own multi-node search), groups of two GPUs per node, and the whole job.
std::vector<GroupPlacement> job_placements(const ClusterSpec& c) {
  std::vector<GroupPlacement> out;
  out.push_back(GroupPlacement::of({0, 1, 2, 3, 4, 5, 6, 7}, c));
  for (int local = 0; local < 8; ++local)
    out.push_back(GroupPlacement::of({local, local + 8, local + 16, local + 24}, c));
  for (int pair = 0; pair < 8; pair += 2)
    out.push_back(
        GroupPlacement::of({pair, pair + 1, pair + 8, pair + 9, pair + 16, pair + 17, pair + 24, pair + 25}, c));
  out.push_back(GroupPlacement::of(testing::first_ranks(32), c));
  out.push_back(GroupPlacement::of({3, 11, 19, 27}, c));  // a second group placed as an earlier one
  return out;
}

std::vector<std::string> log_of(const NcclAnalyticalModel& model, const GroupPlacement& where) {
  return nccl_debug_lines(*model.communicator(where), *model.tuning(where), NcclDebugSubsystems{true, true, true});
}

TEST(NcclPrepare, ThreadsBuildWhatTheSequentialPathBuilds) {
  const ClusterSpec c = testing::h100_cluster(4);
  const std::vector<GroupPlacement> placements = job_placements(c);
  const NcclAnalyticalModel prepared(c, {});
  prepared.prepare(placements, 4);
  for (const GroupPlacement& where : placements) EXPECT_TRUE(prepared.communicator_built(where));
  const NcclAnalyticalModel sequential(c, {});
  for (const GroupPlacement& where : placements) EXPECT_FALSE(sequential.communicator_built(where));
  for (const GroupPlacement& where : placements) {
    const std::vector<std::string> lines = log_of(sequential, where);
    ASSERT_GT(lines.size(), 3u);
    EXPECT_EQ(log_of(prepared, where), lines) << where.nodes << " nodes x " << where.max_per_node;
  }
}

// One thread leaves the building to the first call, as a simulation on one thread always did.
TEST(NcclPrepare, OneThreadBuildsNothingAhead) {
  const ClusterSpec c = testing::h100_cluster(4);
  const NcclAnalyticalModel model(c, {});
  const std::vector<GroupPlacement> placements = job_placements(c);
  model.prepare(placements, 1);
  for (const GroupPlacement& where : placements) EXPECT_FALSE(model.communicator_built(where));
}

TEST(NcclPrepare, AGpuOutsideTheNodeIsTheErrorTheFirstCallGives) {
  const ClusterSpec c = testing::h100_cluster(4);
  std::vector<GroupPlacement> placements = job_placements(c);
  GroupPlacement outside;
  outside.size = 2;
  outside.nodes = 2;
  outside.max_per_node = 1;
  outside.local_ranks = {9};
  placements.push_back(outside);
  const NcclAnalyticalModel model(c, {});
  try {
    model.prepare(placements, 4);
    FAIL() << "a local GPU outside the node was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("local GPU 9 is outside the node's 8 GPUs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainsim
