#pragma once
// How many copies of a token DeepEP's dispatch sends over the network and over NVLink (parallelism.moe_dispatcher:
// flex), under the balanced routing trainsim assumes: each token's top-k experts drawn uniformly, from the router's
// chosen groups when routing is group-limited (DeepSeek-V3's node-limited routing). DeepEP sends a token once to
// each destination node, over RDMA to the GPU of the same local index there, which forwards it over NVLink once to
// each GPU holding one of its experts (deepseek-ai/DeepEP csrc/kernels/internode.cu); inside one node the source
// sends once to each such GPU (intranode.cu). Combine takes the same paths back.
#include "core/collective_kind.hpp"

namespace trainsim {

struct ExpertRouting {
  int experts = 0;     // routed experts, numbered in expert-parallel rank order (E / ep per rank)
  int topk = 0;        // experts per token
  int groups = 0;      // router groups (contiguous ranges of E / groups experts); 0 or 1 = none
  int group_topk = 0;  // groups a token's experts come from
};

// The probability that none of a token's experts is among [first, first + count).
double no_expert_among(const ExpertRouting& r, int first, int count);

// Per token: copies leaving the node (remote destination nodes) and copies forwarded over NVLink (destination GPUs
// other than the one a copy arrives on), averaged over the ranks, for an expert-parallel group of `ep` ranks laid
// out `per_node` to a node in rank order.
TokenExchange deepep_exchange(const ExpertRouting& r, int ep, int per_node);

// Expected distinct expert-parallel ranks a token goes to (DeepEP sends one copy to each; the all-to-all
// dispatcher one per expert).
double ranks_per_token(const ExpertRouting& r, int ep);

}  // namespace trainsim
