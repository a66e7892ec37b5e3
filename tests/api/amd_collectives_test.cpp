// RCCL on AMD GPUs has no NVLink SHARP: NVLS is never chosen for an MI300X node, whatever NCCL_ALGO asks, while
// the same node of H100s uses it for large all-reduces (the contrast keeps the test meaningful).
#include <gtest/gtest.h>

#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"

using namespace trainsim;

namespace {

std::string node_of(const std::string& gpu) {
  return "cluster: {gpu: " + gpu +
         ", num_gpus: 8, gpus_per_node: 8, nics_per_node: 8, nic_gbps: 400}\n"
         "collective: {op: all_reduce, points: [{size: 1G, busbw_GBps: 300}]}\n";
}

std::vector<std::string> algorithms(const std::string& gpu, const std::vector<std::string>& overrides = {}) {
  NcclTestOptions o;
  o.min_bytes = 1 << 20;
  o.max_bytes = std::int64_t{1} << 30;
  o.factor = 4;
  std::vector<std::string> out;
  for (const auto& row : run_nccl_test(parse_scenario(node_of(gpu), "node.yaml", overrides), o).rows)
    out.push_back(row.algorithm);
  return out;
}

bool any_nvls(const std::vector<std::string>& algos) {
  for (const auto& a : algos)
    if (a.rfind("NVLS", 0) == 0) return true;
  return false;
}

TEST(AmdCollectives, NvlsIsNeverChosenOnMi300x) {
  ASSERT_TRUE(any_nvls(algorithms("H100-SXM")));
  EXPECT_FALSE(any_nvls(algorithms("MI300X")));
  EXPECT_FALSE(any_nvls(algorithms("MI300X", {"nccl.NCCL_ALGO=NVLS,Ring"})));
  EXPECT_FALSE(any_nvls(algorithms("MI355X")));
}

}  // namespace
