// Halving-doubling as a flow DAG (plan and source in halving_doubling_plan.hpp): per step one flow
// per survivor to its partner. MPICH runs each step as one MPI_Sendrecv, so a rank's step-k flow
// waits for both its own step-(k-1) send and the step-(k-1) flow into it; folded-away ranks send
// their data first (no dependencies) and receive the result last. Flows are per step, not
// aggregated: there are 2·log2(p)·p + 2r of them. Byte sizes are exact partitions of nBytes into p
// blocks, so totals are conserved: with n a power of two an AllReduce rank sends
// 2(S - its block) = 2(p-1)/p·S when p divides S.
#include <array>
#include <limits>
#include <span>
#include <vector>

#include "collective/algorithms/custom_algorithm_parts.hpp"
#include "collective/algorithms/custom_flow_builder.hpp"
#include "collective/algorithms/custom_step_latency.hpp"
#include "collective/algorithms/halving_doubling_plan.hpp"

namespace trainsim {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// The flows a rank's next step waits on: its own previous send and the previous flow into it.
struct RankFrontier {
  std::vector<std::uint32_t> out, in;
  explicit RankFrontier(int n) : out(static_cast<std::size_t>(n), kNone), in(static_cast<std::size_t>(n), kNone) {}
  // Writes the rank's dependencies into `buffer`, returns how many.
  std::size_t deps(int rank, std::array<std::uint32_t, 2>& buffer) const {
    std::size_t count = 0;
    if (out[rank] != kNone) buffer[count++] = out[rank];
    if (in[rank] != kNone) buffer[count++] = in[rank];
    return count;
  }
};

}  // namespace

FlowDag halving_doubling_flows(CollKind kind, std::int64_t bytes, const NcclCommunicator& comm) {
  check_communicator_shape(comm, "halving_doubling");
  CustomFlowBuilder builder;
  FlowDag& dag = builder.dag();
  dag.algorithm = NcclAlgorithm::HalvingDoubling;
  dag.protocol = NcclProtocol::Simple;
  dag.channels = 1;
  dag.note = "halving-doubling: one flow per rank per step (not aggregated), latency = sum of per-step hwLat";
  const int n = comm.nranks;
  if (n <= 1 || bytes <= 0) return builder.take();

  const HalvingDoublingPlan plan(n);
  RankFrontier frontier(n);
  double latency_us = 0;

  // One sequential step: every (src, dst, bytes) of it depends on the frontier before the step.
  struct Send {
    int src, dst;
    std::int64_t bytes;
  };
  auto run_step = [&](const std::vector<Send>& sends) {
    RankFrontier next = frontier;
    LinkClass slowest = LinkClass::NVLink;
    for (const Send& s : sends) {
      const Flow flow = custom_gpu_flow(comm, s.src, s.dst, s.bytes);
      slowest = slower_link(slowest, flow.link);
      std::array<std::uint32_t, 2> deps{};
      const std::size_t count = frontier.deps(s.src, deps);
      const std::uint32_t id = builder.add(flow, std::span<const std::uint32_t>(deps.data(), count));
      next.out[s.src] = id;
      next.in[s.dst] = id;
    }
    if (!sends.empty()) latency_us += custom_step_latency_us(slowest);
    frontier = std::move(next);
  };

  // Fold-in: AllReduce / ReduceScatter hand over the whole input, AllGather the rank's own S/n.
  if (plan.extras > 0) {
    std::vector<Send> sends;
    for (int rank = 0; rank < 2 * plan.extras; rank += 2) {
      const std::int64_t b = kind == CollKind::AllGather ? partition_bytes(bytes, n, rank, rank + 1) : bytes;
      sends.push_back({rank, rank + 1, b});
    }
    run_step(sends);
  }
  const bool reduce_scatter = kind == CollKind::AllReduce || kind == CollKind::ReduceScatter;
  const bool all_gather = kind == CollKind::AllReduce || kind == CollKind::AllGather;
  std::vector<Send> sends;
  sends.reserve(static_cast<std::size_t>(plan.p));
  if (reduce_scatter) {
    for (int k = 0; k < plan.steps; ++k) {
      sends.clear();
      for (int x = 0; x < plan.p; ++x) {
        const auto [first, last] = plan.halving_send_blocks(x, k);
        sends.push_back(
            {plan.rank_of(x), plan.rank_of(plan.partner(x, k)), partition_bytes(bytes, plan.p, first, last)});
      }
      run_step(sends);
    }
  }
  if (all_gather) {
    for (int k = plan.steps - 1; k >= 0; --k) {
      sends.clear();
      for (int x = 0; x < plan.p; ++x) {
        const auto [first, last] = plan.doubling_send_blocks(x, k);
        sends.push_back(
            {plan.rank_of(x), plan.rank_of(plan.partner(x, k)), partition_bytes(bytes, plan.p, first, last)});
      }
      run_step(sends);
    }
  }
  // Fold-out: the result back to the folded-away ranks (ReduceScatter: only their S/n block).
  if (plan.extras > 0) {
    sends.clear();
    for (int rank = 0; rank < 2 * plan.extras; rank += 2) {
      const std::int64_t b = kind == CollKind::ReduceScatter ? partition_bytes(bytes, n, rank, rank + 1) : bytes;
      sends.push_back({rank + 1, rank, b});
    }
    run_step(sends);
  }
  dag.latency_us = latency_us;
  return builder.take();
}

}  // namespace trainsim
