#pragma once
// The collective operations: one enum from the scenario file (`collective.op`) through the workload to the
// collective model and the network backends, so that none of those layers needs another's headers for it.
#include <cstdint>

namespace trainsim {

enum class CollectiveOp : std::uint8_t { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, SendRecv };
using CollKind = CollectiveOp;

const char* to_string(CollectiveOp op);  // as the scenario file spells it: "all_reduce", "alltoall", ...

// An all-to-all that sends each token once per destination node over the network and forwards it inside the node
// over NVLink (DeepEP's dispatch and combine), described per token of the call's buffer (its bytes are one copy of
// each of the rank's tokens): the copies that leave the node, and those forwarded over NVLink, on average. Both
// zero: an ordinary collective.
struct TokenExchange {
  float remote_copies = 0;
  float nvlink_copies = 0;
  bool on() const { return remote_copies > 0 || nvlink_copies > 0; }
  bool operator==(const TokenExchange&) const = default;
};

}  // namespace trainsim
