#pragma once
// Turns one NCCL call into its flow DAG (NCCL src/enqueue.cc scheduleCollTasksToPlan, calcCollChunking,
// scheduleP2pTasksToPlan; src/device/*.h per algorithm): the channel split (CBD), chunk sizes, loop/step
// structure and per-step peers of the chosen algorithm, and the p2p engine's rounds, channels per peer, parts
// and PXN relays.
#include <cstdint>

#include "collective/flows/flow_dag.hpp"
#include "collective/nccl/nccl_communicator.hpp"

namespace trainsim {

struct FlowOptions {
  FlowGranularity granularity = FlowGranularity::PerChannel;
  std::int64_t buffsize = 4 << 20;             // NCCL_BUFFSIZE (Simple FIFO; step = buffsize / 8)
  std::int64_t p2p_net_chunksize = 128 << 10;  // NCCL_P2P_NET_CHUNKSIZE
  int p2p_pxn_level = 2;                       // NCCL_P2P_PXN_LEVEL
  int element_size = 2;                        // bytes per element (bf16) for CBD cells and chunk rounding
};

// What the tuning model chose for the call (NcclChoice from nccl_tuning.hpp, without the time).
struct CallPlan {
  NcclAlgorithm algorithm = NcclAlgorithm::Ring;
  NcclProtocol protocol = NcclProtocol::Simple;
  int channels = 1;  // nMaxChannels
};

// `bytes` follows NCCL's nBytes convention (CollectiveDesc::bytes): AllReduce/Broadcast/Reduce = the
// buffer, AllGather/ReduceScatter = the full (gathered) buffer, AllToAll = one rank's send buffer,
// SendRecv = what each rank sends to (rank+1) mod n while receiving from (rank-1) mod n.
// `root` for Broadcast/Reduce. Throws Error for algorithms the communicator cannot run.
FlowDag generate_collective_flows(const NcclCommunicator& comm, CollKind kind, std::int64_t bytes, const CallPlan& plan,
                                  const FlowOptions& options, int root = 0);

// A DeepEP dispatch or combine (TokenExchange; `bytes` = one copy of each of a rank's tokens): every rank sends its
// network copies to the rank of its own local index on each other node, spread evenly over them, through its NIC,
// and its NVLink copies to the other GPUs of its node, evenly (under balanced routing each node and GPU is as likely
// as the next). One flow per (sender, peer), no dependencies: DeepEP runs both at once.
FlowDag generate_exchange_flows(const NcclCommunicator& comm, std::int64_t bytes, const TokenExchange& exchange);

// One point-to-point transfer (pipeline-parallel send/recv) of `bytes` from `src` to `dst`.
FlowDag generate_send_flows(const NcclCommunicator& comm, int src, int dst, std::int64_t bytes,
                            const FlowOptions& options);

}  // namespace trainsim
