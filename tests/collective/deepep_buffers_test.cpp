// DeepEP's buffers as Megatron's DeepEP manager sizes them (collective/deepep_buffers.hpp): the larger of the dispatch
// and combine configs' NVLink and RDMA hints, worked out here by hand for DeepSeek-V3's hidden size.
#include "collective/deepep_buffers.hpp"

#include <gtest/gtest.h>

namespace trainsim {
namespace {

TEST(DeepEpBuffers, DeepSeekV3OnSixtyFourRanks) {
  const double hidden_bytes = 7168 * 2;
  // 20 SMs = 10 channels, 8 NVLink ranks, 8 RDMA ranks; both configs receive 288 tokens a chunk over NVLink and 128
  // over RDMA (128 is already a multiple of the send chunk 8). Per token: hidden, source meta (8), 128 int64 expert
  // indices, 128 fp32 weights, 128 fp32 scales (+ an int4 on RDMA, and RDMA buffers are doubled).
  const double nvl = 10.0 * 8 * (2 * 8 + 3) * 4 + 10.0 * 8 * 288 * (hidden_bytes + 8 + 1024 + 512 + 512);
  const double rdma = 10.0 * 8 * 18 * 2 * 4 + 2 * 10.0 * 8 * 128 * (hidden_bytes + 8 + 1024 + 512 + 512 + 16);
  const double nvl_aligned = static_cast<double>((static_cast<long long>(nvl) + 127) / 128 * 128);
  EXPECT_DOUBLE_EQ(deepep_buffer_bytes(7168 * 2, 64, kDeepEpSms), nvl_aligned + rdma);
  EXPECT_NEAR(deepep_buffer_bytes(7168 * 2, 64, kDeepEpSms) / 1e6, 713.7, 0.1);
}

TEST(DeepEpBuffers, OneNodeNeedsNoRdmaBuffer) {
  const double nvl = 10.0 * 8 * 5 * 4 + 10.0 * 8 * 256 * (4096 * 2 + 8 + 1024 + 512 + 512);
  EXPECT_DOUBLE_EQ(deepep_buffer_bytes(4096 * 2, 8, kDeepEpSms),
                   static_cast<double>((static_cast<long long>(nvl) + 127) / 128 * 128));
}

TEST(DeepEpBuffers, OnlyTheGroupSizesDeepEpHasConfigsFor) {
  EXPECT_TRUE(deepep_supports(64));
  EXPECT_TRUE(deepep_supports(160));
  EXPECT_FALSE(deepep_supports(12));
  EXPECT_FALSE(deepep_supports(256));
  EXPECT_EQ(deepep_supported_ranks().front(), 2);
}

}  // namespace
}  // namespace trainsim
