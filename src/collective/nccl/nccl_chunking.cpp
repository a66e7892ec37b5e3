#include "collective/nccl/nccl_chunking.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace trainsim {
namespace {

std::int64_t div_up(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t align_up(std::int64_t a, std::int64_t b) { return div_up(a, b) * b; }

std::int64_t grain_bytes(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::LL: return 16;
    case NcclProtocol::LL128: return 1920;
    case NcclProtocol::Simple: return 512;
  }
  return 512;
}

int log2_floor(int n) {
  int l = 0;
  while ((2 << l) <= n) ++l;
  return l;
}

}  // namespace

std::int64_t wire_bytes(std::int64_t payload, NcclProtocol protocol) {
  switch (protocol) {
    case NcclProtocol::LL: return div_up(payload, 8) * 16;
    case NcclProtocol::LL128: return div_up(payload, 120) * 128;
    case NcclProtocol::Simple: return payload;
  }
  return payload;
}

std::int64_t traffic_per_byte(CollKind kind, int nranks) {
  switch (kind) {
    case CollKind::AllReduce: return 2;
    case CollKind::AllGather:
    case CollKind::ReduceScatter: return nranks;
    default: return 1;
  }
}

// scheduleCollTasksToPlan for one task alone in its plan (NCCL src/enqueue.cc): cells of 32 KiB of traffic, the
// first channel gets `cellsLo`, full channels `cellsPerChannel`, the last the remainder; the
// element count is then trimmed on the last channel so the parts add up to the count exactly.
std::vector<ChannelPart> split_channels_cbd(std::int64_t count_bytes, int element_size, std::int64_t tpb,
                                            int task_channels, int kind_max_channels) {
  if (element_size <= 0 || tpb <= 0) throw Error("flow generation: element size and traffic per byte must be positive");
  const int nchannels = std::max(1, std::min(task_channels, kind_max_channels));
  const std::int64_t elt = element_size;
  const std::int64_t count = count_bytes / elt;
  std::vector<ChannelPart> parts;
  if (count <= 0) return parts;
  const std::int64_t traffic = std::max(kCbdMinTrafficPerChannel, count * elt * tpb);
  const std::int64_t traffic_per_channel = div_up(traffic / nchannels, 16) * 16;
  const std::int64_t cell_size = div_up(div_up(kCbdMinTrafficPerChannel, tpb), 16) * 16;
  const std::int64_t elements_per_cell = std::max<std::int64_t>(1, cell_size / elt);
  const std::int64_t cells = div_up(count * elt, cell_size);
  const std::int64_t traffic_per_cell = cell_size * tpb;
  std::int64_t cells_per_channel = std::min(cells, div_up(traffic_per_channel, traffic_per_cell));
  int channel_id = 0;
  std::int64_t cells_lo =
      (channel_id + 1 == kind_max_channels) ? cells : std::min(cells, div_up(traffic_per_channel, traffic_per_cell));
  std::int64_t n_mid = (cells - cells_lo) / cells_per_channel;
  std::int64_t cells_hi = (cells - cells_lo) % cells_per_channel;
  const std::int64_t n_used = (cells_lo != 0 ? 1 : 0) + n_mid + (cells_hi != 0 ? 1 : 0);
  if (kind_max_channels < channel_id + n_used) {
    n_mid = kind_max_channels - channel_id - 2;
    cells_per_channel = (cells - cells_lo) / (n_mid + 1);
    cells_hi = cells_per_channel + (cells - cells_lo) % (n_mid + 1);
  }
  if (cells_hi == 0 && n_mid != 0) {
    cells_hi = cells_per_channel;
    n_mid -= 1;
  }
  if (cells_lo == 0) {
    channel_id += 1;
    if (n_mid == 0) {
      cells_lo = cells_hi;
      cells_hi = 0;
    } else {
      cells_lo = cells_per_channel;
      n_mid -= 1;
    }
  }
  const std::int64_t count_mid = n_mid != 0 ? cells_per_channel * elements_per_cell : 0;
  std::int64_t count_lo = cells_lo * elements_per_cell;
  std::int64_t count_hi = cells_hi * elements_per_cell;
  (count_hi != 0 ? count_hi : count_lo) -= cells * elements_per_cell - count;

  std::int64_t offset = 0;
  auto push = [&](std::int64_t c) {
    parts.push_back(ChannelPart{channel_id + static_cast<int>(parts.size()), offset * elt, c * elt});
    offset += c;
  };
  if (count_lo != 0) push(count_lo);
  for (std::int64_t m = 0; m < n_mid; ++m) push(count_mid);
  if (cells_hi != 0) push(count_hi);
  return parts;
}

CollChunking calc_coll_chunking(const ChunkingInput& in) {
  CollChunking out;
  const bool ring_simple = in.protocol == NcclProtocol::Simple && in.algorithm == NcclAlgorithm::Ring;
  const bool ring_big_steps =
      in.kind == CollKind::AllReduce || in.kind == CollKind::AllGather || in.kind == CollKind::ReduceScatter;
  out.chunk_steps = ring_simple && ring_big_steps ? 4 : 1;  // collectives.h chunk/slice steps
  out.slice_steps = ring_simple && ring_big_steps ? 2 : 1;
  std::int64_t step = in.protocol == NcclProtocol::Simple ? in.simple_buffsize / 8
                      : in.protocol == NcclProtocol::LL   ? kLLStepBytes
                                                          : kLL128StepBytes;
  std::int64_t chunk = step * out.chunk_steps;
  if (in.protocol == NcclProtocol::LL) chunk /= 2;
  if (in.protocol == NcclProtocol::LL128) chunk = chunk / 128 * 120;  // NCCL_LL128_LINEELEMS / DATAELEMS
  const std::int64_t nbytes = in.nbytes;
  const std::int64_t heads = std::max(1, in.nvls_heads);

  switch (in.algorithm) {
    case NcclAlgorithm::NVLS: {
      chunk = std::min(chunk, kNvlsChunkBytes);
      const std::int64_t c = heads;  // nChannels (1) × nHeads
      if (nbytes < 64 * c * chunk && chunk > 65536) chunk = 65536;
      if (nbytes < 8 * c * chunk && chunk > 32768) chunk = 32768;
      if (nbytes < 2 * c * chunk && chunk > 16384) chunk = 16384;
      break;
    }
    case NcclAlgorithm::NVLSTree: {
      const std::int64_t c = heads;
      chunk = std::min(kNvlsChunkBytes, in.nnodes >= 4 ? std::int64_t{65536} : kNvlsChunkBytes);
      if (nbytes < 32 * c * chunk && chunk > 262144) chunk = 262144;
      if (nbytes < 16 * c * chunk && chunk > 131072) chunk = 131072;
      if (nbytes < 4 * c * chunk && chunk > 65536) chunk = 65536;
      if (nbytes < 1 * c * chunk && chunk > 32768) chunk = 32768;
      break;
    }
    case NcclAlgorithm::Tree:
      if (in.protocol == NcclProtocol::LL128) {
        const double ppn = static_cast<double>(in.nranks) / std::max(1, in.nnodes);
        const double nsteps = 1 + log2_floor(std::max(1, in.nnodes)) + 0.1 * ppn;
        // NCCL compares an integer quotient with a float bound.
        while (static_cast<double>(nbytes / chunk) < nsteps * 64 / ppn && chunk > 131072) chunk /= 2;
        while (static_cast<double>(nbytes / chunk) < nsteps * 16 / ppn && chunk > 32768) chunk /= 2;
      }
      break;
    case NcclAlgorithm::CollNetDirect: {
      // depth = the chain length, i.e. ranks per node (calcCollChunking); c = nChannels (1) × nHeads.
      const std::int64_t depth = std::max<std::int64_t>(1, in.nranks / std::max(1, in.nnodes));
      while (nbytes / (heads * chunk) < depth * 64 && chunk > 131072) chunk /= 2;
      while (nbytes / (heads * chunk) < depth * 8 && chunk > 65536) chunk /= 2;
      while (nbytes / (heads * chunk) < depth * 8 && chunk > 32768) chunk /= 2;
      break;
    }
    case NcclAlgorithm::CollNetChain: {
      const std::int64_t depth = std::max<std::int64_t>(1, in.nranks / std::max(1, in.nnodes));
      chunk = std::min<std::int64_t>(262144, chunk);
      while (nbytes / chunk < depth * 64 && chunk > 131072) chunk /= 2;
      while (nbytes / chunk < depth * 8 && chunk > 65536) chunk /= 2;
      while (nbytes / chunk < depth && chunk > 32768) chunk /= 2;
      break;
    }
    case NcclAlgorithm::PAT: {
      const std::int64_t factor = in.kind == CollKind::AllGather ? 32 : 16;
      while (chunk * factor > nbytes && chunk > 65536) chunk /= 2;
      break;
    }
    default: break;
  }
  const std::int64_t grain = grain_bytes(in.protocol);
  chunk = chunk / grain * grain;
  out.chunk_bytes = std::max(chunk, grain);

  if (in.algorithm == NcclAlgorithm::Ring && in.kind == CollKind::AllReduce) {
    out.nsteps_per_loop = 2 * (in.nranks - 1);
    out.nchunks_per_loop = in.nranks;
  } else if (in.algorithm == NcclAlgorithm::Ring &&
             (in.kind == CollKind::AllGather || in.kind == CollKind::ReduceScatter)) {
    out.nsteps_per_loop = in.nranks - 1;
    out.nchunks_per_loop = in.nranks;
  } else if (in.algorithm == NcclAlgorithm::NVLS || in.algorithm == NcclAlgorithm::NVLSTree ||
             in.algorithm == NcclAlgorithm::CollNetDirect) {
    out.nchunks_per_loop = static_cast<int>(heads);
  }
  out.loop_bytes = static_cast<std::int64_t>(out.nchunks_per_loop) * out.chunk_bytes;
  out.nloops = div_up(nbytes, out.loop_bytes);
  out.proxy_steps = out.nsteps_per_loop * out.nloops * out.chunk_steps;
  return out;
}

std::int64_t PartLoops::full_loops() const { return part / (chunk * per_loop); }
std::int64_t PartLoops::last_rem() const { return part % (chunk * per_loop); }
std::int64_t PartLoops::last_chunk() const { return align_up(div_up(last_rem(), per_loop), align); }

std::int64_t PartLoops::chunk_bytes(std::int64_t loop, int k) const {
  if (loop < full_loops()) return chunk;
  const std::int64_t rem = last_rem(), c = last_chunk();
  return std::clamp<std::int64_t>(rem - static_cast<std::int64_t>(k) * c, 0, c);
}

std::int64_t PartLoops::chunk_payload_total(int k) const {
  return full_loops() * chunk + (last_rem() > 0 ? chunk_bytes(full_loops(), k) : 0);
}

std::int64_t PartLoops::chunk_wire_total(int k, NcclProtocol protocol) const {
  std::int64_t w = full_loops() * wire_bytes(chunk, protocol);
  if (last_rem() > 0) w += wire_bytes(chunk_bytes(full_loops(), k), protocol);
  return w;
}

PieceTotals piece_totals(std::int64_t part, std::int64_t chunk, NcclProtocol protocol) {
  PieceTotals t;
  if (part <= 0 || chunk <= 0) return t;
  const std::int64_t full = part / chunk, rem = part % chunk;
  t.pieces = full + (rem > 0 ? 1 : 0);
  t.payload = part;
  t.wire = full * wire_bytes(chunk, protocol) + (rem > 0 ? wire_bytes(rem, protocol) : 0);
  return t;
}

}  // namespace trainsim
