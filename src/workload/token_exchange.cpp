#include "workload/token_exchange.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/check.hpp"

namespace trainsim {

namespace {

double log_choose(int n, int r) {
  if (r < 0 || r > n) return -INFINITY;
  return std::lgamma(n + 1.0) - std::lgamma(r + 1.0) - std::lgamma(n - r + 1.0);
}

// k experts drawn without replacement among `candidates`, `inside` of them in the range: none drawn there.
double none_drawn(int candidates, int inside, int k) {
  double p = 1.0;
  for (int i = 0; i < k; ++i) {
    const double left = static_cast<double>(candidates - inside - i);
    if (left <= 0) return 0.0;
    p *= left / static_cast<double>(candidates - i);
  }
  return p;
}

}  // namespace

double no_expert_among(const ExpertRouting& r, int first, int count) {
  TRAINSIM_CHECK(r.experts > 0 && r.topk > 0 && r.topk <= r.experts, "token exchange: bad routing");
  if (r.groups <= 1) return none_drawn(r.experts, count, r.topk);
  const int size = r.experts / r.groups, chosen = r.group_topk;
  // The groups the range overlaps, and by how many experts; the router picks `chosen` groups uniformly and the
  // top-k among their experts.
  std::vector<int> overlaps;
  for (int g = 0; g < r.groups; ++g) {
    const int lo = std::max(first, g * size), hi = std::min(first + count, (g + 1) * size);
    if (hi > lo) overlaps.push_back(hi - lo);
  }
  // ways[j][s]: ways to pick j of the overlapped groups, s experts of the range among them.
  const int n = static_cast<int>(overlaps.size());
  std::vector<std::vector<double>> ways(static_cast<std::size_t>(n) + 1,
                                        std::vector<double>(static_cast<std::size_t>(count) + 1, 0.0));
  ways[0][0] = 1.0;
  for (const int o : overlaps)
    for (int j = n - 1; j >= 0; --j)
      for (int s = count - o; s >= 0; --s)
        ways[static_cast<std::size_t>(j) + 1][static_cast<std::size_t>(s + o)] +=
            ways[static_cast<std::size_t>(j)][static_cast<std::size_t>(s)];
  const int others = r.groups - n;
  double p = 0.0;
  for (int j = 0; j <= std::min(n, chosen); ++j)
    for (int s = 0; s <= count; ++s) {
      const double w = ways[static_cast<std::size_t>(j)][static_cast<std::size_t>(s)];
      if (w == 0.0) continue;
      const double pick = std::exp(std::log(w) + log_choose(others, chosen - j) - log_choose(r.groups, chosen));
      p += pick * none_drawn(chosen * size, s, r.topk);
    }
  return p;
}

double ranks_per_token(const ExpertRouting& r, int ep) {
  const int per_rank = r.experts / ep;
  double sum = 0.0;
  for (int k = 0; k < ep; ++k) sum += 1.0 - no_expert_among(r, k * per_rank, per_rank);
  return sum;
}

TokenExchange deepep_exchange(const ExpertRouting& r, int ep, int per_node) {
  TRAINSIM_CHECK(ep > 0 && per_node > 0 && ep % per_node == 0 && r.experts % ep == 0,
                 "token exchange: expert-parallel ranks do not fill whole nodes");
  const int nodes = ep / per_node, per_rank = r.experts / ep;
  double node_copies = 0.0;
  for (int h = 0; h < nodes; ++h) node_copies += 1.0 - no_expert_among(r, h * per_node * per_rank, per_node * per_rank);
  TokenExchange x;
  // The source's own node is one of them as often as any other (balanced routing): (nodes - 1) / nodes leave it.
  x.remote_copies = static_cast<float>(node_copies * (nodes - 1) / nodes);
  // The copy arriving on a node lands on one of its GPUs (the source's local index there), as likely any as the
  // others: the other (per_node - 1) / per_node of its destination GPUs get it over NVLink.
  x.nvlink_copies = static_cast<float>(ranks_per_token(r, ep) * (per_node - 1) / per_node);
  return x;
}

}  // namespace trainsim
