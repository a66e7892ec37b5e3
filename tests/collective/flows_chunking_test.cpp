// CBD channel split and calcCollChunking (NCCL src/enqueue.cc scheduleCollTasksToPlan, calcCollChunking)
// against what NCCL 2.30.7's code gives for the 2 × 8 H100 example (docs/collectives.md).
#include <gtest/gtest.h>

#include "collective/nccl/nccl_chunking.hpp"
#include "support/byte_sizes.hpp"

namespace trainsim {
namespace {

using test::GiB;
using test::KiB;
using test::MiB;

TEST(FlowsChunking, Cbd1GiBAllReduceGivesEqualContiguousParts) {
  const auto parts = split_channels_cbd(GiB, 2, traffic_per_byte(CollKind::AllReduce, 16), 16, 16);
  ASSERT_EQ(parts.size(), 16u);
  for (int k = 0; k < 16; ++k) {
    EXPECT_EQ(parts[static_cast<std::size_t>(k)].channel, k);
    EXPECT_EQ(parts[static_cast<std::size_t>(k)].offset, k * 64 * MiB);
    EXPECT_EQ(parts[static_cast<std::size_t>(k)].bytes, 64 * MiB);
  }
}

TEST(FlowsChunking, CbdAllGatherAndSmallLL) {
  // NCCL, 64 MiB AllGather = 4 MiB per rank, 16 channels × 256 KiB of each contribution.
  const auto ag = split_channels_cbd(4 * MiB, 1, traffic_per_byte(CollKind::AllGather, 16), 16, 16);
  ASSERT_EQ(ag.size(), 16u);
  for (const auto& p : ag) EXPECT_EQ(p.bytes, 256 * KiB);
  // NCCL, 8 KiB AllReduce LL on 2 channels: 4 KiB each.
  const auto ll = split_channels_cbd(8 * KiB, 2, 4 * traffic_per_byte(CollKind::AllReduce, 16), 2, 16);
  ASSERT_EQ(ll.size(), 2u);
  EXPECT_EQ(ll[0].bytes, 4 * KiB);
  EXPECT_EQ(ll[1].offset, 4 * KiB);
  EXPECT_EQ(ll[1].bytes, 4 * KiB);
}

TEST(FlowsChunking, CbdOddSizesAddUp) {
  for (std::int64_t bytes : {std::int64_t{2}, std::int64_t{70000}, 3 * MiB + 6, 999 * MiB + 2}) {
    const auto parts = split_channels_cbd(bytes, 2, 2, 13, 16);
    std::int64_t sum = 0, offset = 0;
    for (const auto& p : parts) {
      EXPECT_EQ(p.offset, offset);
      offset += p.bytes;
      sum += p.bytes;
      EXPECT_LT(p.channel, 16);
    }
    EXPECT_EQ(sum, bytes);
  }
}

TEST(FlowsChunking, ChunkSizesPerAlgorithm) {
  ChunkingInput ring{CollKind::AllReduce, NcclAlgorithm::Ring, NcclProtocol::Simple, 64 * MiB, 16, 2, 1, 4 * MiB};
  const CollChunking r = calc_coll_chunking(ring);
  EXPECT_EQ(r.chunk_bytes, 2 * MiB);
  EXPECT_EQ(r.nloops, 2);
  EXPECT_EQ(r.nsteps_per_loop, 30);
  EXPECT_EQ(r.proxy_steps, 30 * 2 * 4);
  EXPECT_EQ(r.slice_steps, 2);
  ChunkingInput bc = ring;
  bc.kind = CollKind::Broadcast;
  EXPECT_EQ(calc_coll_chunking(bc).chunk_bytes, 512 * KiB);
  ChunkingInput ll = ring;
  ll.protocol = NcclProtocol::LL;
  EXPECT_EQ(calc_coll_chunking(ll).chunk_bytes, 32 * KiB);
  ChunkingInput ll128 = ring;
  ll128.protocol = NcclProtocol::LL128;
  EXPECT_EQ(calc_coll_chunking(ll128).chunk_bytes, 576000);
  ChunkingInput nvlstree{
      CollKind::AllReduce, NcclAlgorithm::NVLSTree, NcclProtocol::Simple, 64 * MiB, 16, 2, 8, 4 * MiB};
  const CollChunking nt = calc_coll_chunking(nvlstree);
  EXPECT_EQ(nt.chunk_bytes, 128 * KiB);
  EXPECT_EQ(nt.nloops, 64);  // NCCL, 1 GiB: 64 loops of 8 chunks per channel
  nvlstree.nnodes = 4;
  EXPECT_EQ(calc_coll_chunking(nvlstree).chunk_bytes, 64 * KiB);
  ChunkingInput nvls{CollKind::AllReduce, NcclAlgorithm::NVLS, NcclProtocol::Simple, 4 * MiB, 8, 1, 8, 4 * MiB};
  EXPECT_EQ(calc_coll_chunking(nvls).chunk_bytes, 64 * KiB);  // 4 MiB < 64·8·128 KiB, not < 8·8·64 KiB
  nvls.nbytes = 4 * MiB - 1;
  EXPECT_EQ(calc_coll_chunking(nvls).chunk_bytes, 32 * KiB);
  ChunkingInput pat{CollKind::AllGather, NcclAlgorithm::PAT, NcclProtocol::Simple, 4 * MiB, 4, 4, 1, 4 * MiB};
  EXPECT_EQ(calc_coll_chunking(pat).chunk_bytes, 128 * KiB);  // halve while chunk·32 > 4 MiB
}

TEST(FlowsChunking, WireOverheadPerProtocol) {
  EXPECT_EQ(wire_bytes(4096, NcclProtocol::LL), 8192);
  EXPECT_EQ(wire_bytes(576000, NcclProtocol::LL128), 614400);
  EXPECT_EQ(wire_bytes(12345, NcclProtocol::Simple), 12345);
}

TEST(FlowsChunking, PartialLastLoopShrinksChunks) {
  // 3 MiB + 4 KiB on one channel, 16 ranks, 2 MiB chunks: one full 32 MiB loop does not fit, so
  // the only loop uses chunks of alignUp(ceil(rem/16), 16) bytes and they add up to the part.
  const PartLoops l{3 * MiB + 4 * KiB, 2 * MiB, 16, 16};
  EXPECT_EQ(l.full_loops(), 0);
  EXPECT_EQ(l.loops(), 1);
  std::int64_t sum = 0;
  for (int k = 0; k < 16; ++k) sum += l.chunk_bytes(0, k);
  EXPECT_EQ(sum, 3 * MiB + 4 * KiB);
  EXPECT_EQ(l.last_chunk(), 196864);  // ceil(3149824 / 16) = 196864, already 16-aligned
}

}  // namespace
}  // namespace trainsim
