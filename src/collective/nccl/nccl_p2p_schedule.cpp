// NCCL's p2p round schedule (NCCL src/init.cc, ncclP2pSchedule). Ranks are
// cut into groups of p2p_group_size consecutive local ranks; group deltas follow the quadratic
// sequence (x² + x)/2 mod pow2Up(nGroups), which visits every residue exactly once when the modulus
// is a power of two (deltas ≥ nGroups are skipped), and within a group delta every intra-group delta.
// Round i therefore pairs "send to (g+d, l+δ)" with "receive from (g−d, l−δ)", a permutation of the
// ranks in every round. Computed on demand per rank (O(nranks)), never stored for all ranks.
#include <string>
#include <vector>

#include "collective/nccl/nccl_communicator.hpp"
#include "core/error.hpp"
#include "core/index.hpp"

namespace trainsim {
namespace {

// Fills one rank's schedule: send peers (send == true) or receive peers.
std::vector<int> p2p_schedule(const NcclCommunicator& comm, int rank, bool send) {
  if (rank < 0 || rank >= comm.nranks)
    throw Error("nccl p2p schedule: rank " + std::to_string(rank) + " outside the communicator of " +
                std::to_string(comm.nranks) + " ranks");
  const int gs = comm.p2p_group_size;
  if (gs < 1) throw Error("nccl p2p schedule: communicator has no p2p group size");
  // Group g -> (node, first local rank of the group); groups are numbered node by node.
  std::vector<int> group_node, group_local;
  int my_group = -1;
  for (int n = 0; n < comm.nnodes; ++n) {
    const int ppn = static_cast<int>(comm.node_ranks[idx(n)].size());
    if (ppn % gs != 0) throw Error("nccl p2p schedule: group size does not divide node " + std::to_string(n));
    if (n == comm.node_of[idx(rank)]) my_group = static_cast<int>(group_node.size()) + comm.local_of[idx(rank)] / gs;
    for (int g = 0; g < ppn / gs; ++g) {
      group_node.push_back(n);
      group_local.push_back(g * gs);
    }
  }
  const int ngroups = static_cast<int>(group_node.size());
  int pow2 = 1;
  while (pow2 < ngroups) pow2 <<= 1;
  const int local = comm.local_of[idx(rank)] % gs;

  std::vector<int> peers;
  peers.reserve(idx(comm.nranks));
  int delta = 0;
  for (int round = 1; round <= pow2; ++round) {
    if (delta < ngroups) {
      const int g = send ? (my_group + delta) % ngroups : (my_group - delta + ngroups) % ngroups;
      const auto& ranks = comm.node_ranks[idx(group_node[idx(g)])];
      for (int d = 0; d < gs; ++d) {
        const int l = send ? (local + d) % gs : (local - d + gs) % gs;
        peers.push_back(ranks[idx(group_local[idx(g)] + l)]);
      }
    }
    delta = (delta + round) & (pow2 - 1);  // quadratic update
  }
  if (static_cast<int>(peers.size()) != comm.nranks) throw Error("nccl p2p schedule: round count mismatch");
  return peers;
}

}  // namespace

std::vector<int> NcclCommunicator::p2p_send_peer(int rank) const { return p2p_schedule(*this, rank, true); }

std::vector<int> NcclCommunicator::p2p_recv_peer(int rank) const { return p2p_schedule(*this, rank, false); }

}  // namespace trainsim
