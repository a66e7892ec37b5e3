// The scale-up fabric follows the GPU's vendor: NVLink (nvswitch, nvlink-mesh) on NVIDIA parts, Infinity Fabric
// (xGMI) on AMD ones, PCIe on either. An MI300X used to default to nvswitch and be described to the collective
// model as an NVSwitch system.
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

std::string on(const char* gpu) { return edit(kValidScenario, "cluster.gpu", gpu); }

TEST(ScaleUpVendor, DefaultKindFollowsTheVendor) {
  EXPECT_EQ(parse_scenario(on("MI300X"), "test.yaml").cluster.scale_up.kind, ScaleUpKind::InfinityFabric);
  EXPECT_EQ(parse_scenario(on("MI355X"), "test.yaml").cluster.scale_up.kind, ScaleUpKind::InfinityFabric);
  EXPECT_EQ(parse_scenario(on("H100-SXM"), "test.yaml").cluster.scale_up.kind, ScaleUpKind::NVSwitch);
  EXPECT_EQ(parse_scenario(edit(on("MI300X"), "cluster.scale_up.kind", "pcie"), "test.yaml").cluster.scale_up.kind,
            ScaleUpKind::PCIe);
}

TEST(ScaleUpVendor, NvlinkOnAnAmdGpuIsAnErrorOnTheKind) {
  EXPECT_SCENARIO_ERROR(edit(on("MI300X"), "cluster.scale_up.kind", "nvswitch"), "cluster.scale_up.kind",
                        "nvswitch is NVIDIA's NVLink", "MI300X is an AMD GPU", "infinity-fabric");
  EXPECT_SCENARIO_ERROR(edit(on("MI300X"), "cluster.scale_up.kind", "nvlink-mesh"), "cluster.scale_up.kind",
                        "nvlink-mesh is NVIDIA's NVLink");
  EXPECT_SCENARIO_ERROR(edit(on("H100-SXM"), "cluster.scale_up.kind", "infinity-fabric"), "cluster.scale_up.kind",
                        "infinity-fabric is AMD's xGMI", "H100-SXM is an NVIDIA GPU");
}

// A GPU described by its datasheet: the vendor it states decides; without one every kind stays open.
TEST(ScaleUpVendor, GpuSpecVendorDecides) {
  const std::string custom = edit(on("x"), "cluster.gpu", nullptr);
  const char* amd = "{vendor: AMD, peak_tflops: {bf16: 1300}, hbm_GBps: 5300, memory_gib: 192, scale_up_GBps: 448}";
  const char* unnamed = "{peak_tflops: {bf16: 1300}, hbm_GBps: 5300, memory_gib: 192, scale_up_GBps: 448}";
  EXPECT_EQ(parse_scenario(edit(custom, "cluster.gpu_spec", amd), "test.yaml").cluster.scale_up.kind,
            ScaleUpKind::InfinityFabric);
  EXPECT_EQ(parse_scenario(edit(custom, "cluster.gpu_spec", unnamed), "test.yaml").cluster.scale_up.kind,
            ScaleUpKind::NVSwitch);
  const std::string either =
      edit(edit(custom, "cluster.gpu_spec", unnamed), "cluster.scale_up.kind", "infinity-fabric");
  EXPECT_EQ(parse_scenario(either, "test.yaml").cluster.scale_up.kind, ScaleUpKind::InfinityFabric);
}

}  // namespace
}  // namespace trainsim
