#pragma once
// How NCCL cuts one collective into per-channel parts, chunks and loops (NCCL src/enqueue.cc:
// scheduleCollTasksToPlan's continuous byte distribution, calcCollChunking, proxy steps) and what a
// payload costs on the wire per protocol (src/include/device.h, LL/LL128 line formats). Pure arithmetic on
// sizes; the flow generators walk its output.
#include <cstdint>
#include <vector>

#include "collective/collective_model.hpp"

namespace trainsim {

// FIFO step sizes per protocol (NCCL_STEPS, comm.h buffer sizes): Simple = NCCL_BUFFSIZE / 8, LL 64 KiB raw,
// LL128 614,400 B raw.
inline constexpr std::int64_t kLLStepBytes = 65536;
inline constexpr std::int64_t kLL128StepBytes = 614400;
inline constexpr std::int64_t kNvlsChunkBytes = 128 << 10;  // NCCL_NVLS_CHUNKSIZE
inline constexpr std::int64_t kCbdMinTrafficPerChannel = 32 << 10;

// Wire bytes of one message of `payload` bytes (device.h line formats): LL 8 B of data per 16 B line, LL128 120 B per
// 128 B line, Simple as is.
std::int64_t wire_bytes(std::int64_t payload, NcclProtocol protocol);

// ncclFuncTrafficPerByte (enqueue.cc): AllReduce 2, AllGather/ReduceScatter nranks, else 1.
std::int64_t traffic_per_byte(CollKind kind, int nranks);

// One channel's contiguous slice of the per-rank buffer (AllGather/ReduceScatter: of each rank's
// contribution), in bytes.
struct ChannelPart {
  int channel = 0;
  std::int64_t offset = 0;
  std::int64_t bytes = 0;
};

// CBD for a lone task starting at channel 0 (NCCL src/enqueue.cc, scheduleCollTasksToPlan). `count_bytes` = the
// per-rank count × element size; `task_channels` = nMaxChannels of the call; `kind_max_channels` =
// the channel budget of its kind (comm nChannels, or nvlsChannels for NVLS kinds).
std::vector<ChannelPart> split_channels_cbd(std::int64_t count_bytes, int element_size, std::int64_t traffic_per_byte,
                                            int task_channels, int kind_max_channels);

struct ChunkingInput {
  CollKind kind = CollKind::AllReduce;
  NcclAlgorithm algorithm = NcclAlgorithm::Ring;
  NcclProtocol protocol = NcclProtocol::Simple;
  std::int64_t nbytes = 0;  // global bytes of this channel part (part × nranks for AG/RS)
  int nranks = 1, nnodes = 1;
  int nvls_heads = 1;
  std::int64_t simple_buffsize = 4 << 20;  // NCCL_BUFFSIZE
};

// calcCollChunking's result for one part with nChannels = 1 (enqueue.cc).
struct CollChunking {
  std::int64_t chunk_bytes = 0;  // payload bytes per chunk (grain aligned)
  int chunk_steps = 1, slice_steps = 1;
  int nchunks_per_loop = 1;     // nranks (Ring), nHeads (NVLS*), 1 otherwise
  int nsteps_per_loop = 1;      // 2(n-1) RingTwice, n-1 Ring, 1 otherwise
  std::int64_t loop_bytes = 0;  // nchunks_per_loop × chunk_bytes
  std::int64_t nloops = 0;
  std::int64_t proxy_steps = 0;  // nsteps the proxy posts (nstepsPerLoop × nLoops × chunkSteps)
};
CollChunking calc_coll_chunking(const ChunkingInput& in);

// The kernel's loop over one channel part: full loops of `per_loop` chunks of `chunk` bytes, then a
// last partial loop whose chunk shrinks to alignUp(ceil(rem / per_loop), align) (ring: 16 B,
// NVLS: 16 KiB), with trailing chunks possibly short or empty (runRing, calcCollChunking).
struct PartLoops {
  std::int64_t part = 0, chunk = 0, align = 16;
  int per_loop = 1;

  std::int64_t full_loops() const;
  std::int64_t last_rem() const;  // bytes in the partial last loop (0 when none)
  std::int64_t loops() const { return full_loops() + (last_rem() > 0 ? 1 : 0); }
  std::int64_t last_chunk() const;
  // Bytes of chunk k (0 <= k < per_loop) in loop `loop`.
  std::int64_t chunk_bytes(std::int64_t loop, int k) const;
  // Payload and wire totals of chunk index k summed over all loops.
  std::int64_t chunk_payload_total(int k) const;
  std::int64_t chunk_wire_total(int k, NcclProtocol protocol) const;
};

// Tree/pipeline style loop: consecutive pieces of min(chunk, remaining) bytes.
struct PieceTotals {
  std::int64_t pieces = 0, payload = 0, wire = 0;
};
PieceTotals piece_totals(std::int64_t part, std::int64_t chunk, NcclProtocol protocol);

}  // namespace trainsim
