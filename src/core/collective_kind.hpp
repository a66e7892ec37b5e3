#pragma once
// The collective operations: one enum from the scenario file (`collective.op`) through the workload to the
// collective model and the network backends, so that none of those layers needs another's headers for it.
#include <cstdint>

namespace trainsim {

enum class CollectiveOp : std::uint8_t { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, SendRecv };
using CollKind = CollectiveOp;

const char* to_string(CollectiveOp op);  // as the scenario file spells it: "all_reduce", "alltoall", ...

}  // namespace trainsim
