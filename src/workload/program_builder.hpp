#pragma once
// Builds RankPrograms with PyTorch/NCCL stream semantics, so the generator reads like the
// framework code it mirrors:
//  - compute kernels run in issue order on the compute stream;
//  - a collective launched on a communicator stream first waits for everything issued on the
//    compute stream so far (PyTorch makes the NCCL stream wait on the current stream) and queues
//    FIFO behind earlier collectives on the same stream;
//  - `wait(op)` is handle.wait(): the compute stream waits for `op` before its next kernel.
// Kernels and collectives are deduplicated into the Workload's tables.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "workload/workload.hpp"

namespace trainsim {

class WorkloadBuilder;

struct OpContext {
  Phase phase = Phase::Other;
  int layer = -1;
  int micro_batch = -1;
};

class RankBuilder {
 public:
  RankBuilder(WorkloadBuilder& wb, RankProgram& program) : wb_(wb), prog_(program) {}

  // `launches`: the kernels the host launches for it (Op::launches), when one op stands for several.
  std::uint32_t compute(const OpContext& ctx, std::string_view name, const KernelDesc& k, int launches = 1);
  // A kernel on a side stream (`stream`, in order with the collectives issued there) that waits for the compute
  // stream's last kernel, as a framework's side-stream work does after `side.wait_stream(compute)` (FSDP1's
  // post-backward gradient cast); the compute stream does not wait for it.
  std::uint32_t compute_beside(const OpContext& ctx, Stream stream, std::string_view name, const KernelDesc& k);
  // `sender`: for a one-way SendRecv, the global rank that sends (-1: both members send).
  std::uint32_t collective(const OpContext& ctx, Stream stream, std::string_view name, CollKind kind,
                           std::uint32_t group, std::int64_t bytes, int sender = -1);
  // A collective whose kernels hold `sms` SMs instead of one CTA per NCCL channel (CollectiveDesc::sms).
  std::uint32_t collective_on_sms(const OpContext& ctx, Stream stream, std::string_view name, CollKind kind,
                                  std::uint32_t group, std::int64_t bytes, int sms);
  // A DeepEP token exchange over `group` (CollectiveDesc::exchange), its kernels on `sms` SMs, the compute stream
  // waiting for it.
  std::uint32_t sync_token_exchange(const OpContext& ctx, Stream stream, std::string_view name, std::uint32_t group,
                                    std::int64_t bytes, const TokenExchange& exchange, int sms);
  void wait(std::uint32_t op) { frontier_.push_back(op); }
  // The host blocks until `ops` have finished before it issues anything more (an event's synchronize(), `.item()`
  // on a result of `ops`): the next op issued carries the wait (Op::host_waits) and waits for them on the GPU too.
  void host_wait(const std::vector<std::uint32_t>& ops);
  // `.item()` on the result of the op issued last.
  void host_wait_for_last() { host_wait({static_cast<std::uint32_t>(prog_.ops.size() - 1)}); }
  // torch.cuda.synchronize(): the host waits for the last op issued on every stream.
  void host_synchronize();
  // A collective the compute stream waits for right away (synchronous NCCL call).
  std::uint32_t sync_collective(const OpContext& ctx, Stream stream, std::string_view name, CollKind kind,
                                std::uint32_t group, std::int64_t bytes, int sender = -1) {
    const auto id = collective(ctx, stream, name, kind, group, bytes, sender);
    wait(id);
    return id;
  }
  int rank() const { return prog_.rank; }
  void record_step(const ProgramStep& s) { prog_.steps.push_back(s); }
  std::size_t op_count() const { return prog_.ops.size(); }  // ops issued so far

 private:
  // An op's fields every kind sets alike: its type, stream, context and interned name.
  Op new_op(Op::Type type, Stream stream, const OpContext& ctx, std::string_view name);
  std::uint32_t append(Op op, const std::vector<std::uint32_t>& deps);
  std::uint32_t append_collective(const OpContext& ctx, Stream stream, std::string_view name,
                                  const CollectiveDesc& desc);

  WorkloadBuilder& wb_;
  RankProgram& prog_;
  std::vector<std::uint32_t> frontier_;         // ops the compute stream waits for before its next kernel
  std::vector<std::uint32_t> collective_deps_;  // a collective's predecessors, kept to spare an allocation per op
  std::int64_t last_compute_ = -1;
  static constexpr std::uint32_t kNoOp = 0xffffffffu;
  std::array<std::uint32_t, kNumStreams> last_on_stream_ = filled(kNoOp);  // the last op issued on each stream
  std::vector<std::uint32_t> host_wait_;     // what the host waits for before it issues the next op
  std::vector<std::uint32_t> ordered_deps_;  // the next op's deps, those the host waits for first (scratch)
  static constexpr std::array<std::uint32_t, kNumStreams> filled(std::uint32_t v) {
    std::array<std::uint32_t, kNumStreams> a{};
    a.fill(v);
    return a;
  }
  std::unordered_map<std::uint32_t, std::uint32_t> seq_per_group_;
};

// Interning keys: the descriptions' fields bit for bit (two doubles that print alike but differ in their bits,
// such as 0.0 and -0.0, stay two entries, as a byte-wise key kept them), hashed without building a string.
struct KernelKeyHash {
  std::size_t operator()(const KernelDesc& d) const;
};
struct KernelKeyEqual {
  bool operator()(const KernelDesc& a, const KernelDesc& b) const;
};
struct CollectiveKeyHash {
  std::size_t operator()(const CollectiveDesc& d) const;
};
struct CollectiveKeyEqual {
  bool operator()(const CollectiveDesc& a, const CollectiveDesc& b) const { return a == b; }
};
// Op names are looked up far more often than added: heterogeneous lookup, so a lookup copies nothing.
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class WorkloadBuilder {
 public:
  WorkloadBuilder(int world_size, std::vector<int> simulated_ranks);

  // Group id for these members (deduplicated); `members` must be sorted.
  std::uint32_t group(GroupKind kind, const std::vector<int>& members);
  std::uint32_t kernel(const KernelDesc& k);
  std::uint32_t collective(const CollectiveDesc& c);
  const std::vector<int>& group_ranks(std::uint32_t group) const { return wl_.groups[group].ranks; }
  std::uint16_t name(std::string_view n);
  bool is_simulated(int rank) const;

  // Program of the i-th simulated rank.
  RankBuilder rank_builder(std::size_t i) { return RankBuilder(*this, wl_.ranks[i]); }
  // Room in rank i's program for as many ops and dependencies as rank `like`'s has, and a quarter more: the ranks of
  // one job issue programs of about one size, and a program grown by doubling writes each op about twice, to pages
  // the kernel must clear first (a quarter of a large job's preparation). Room not used is never touched.
  void reserve_like(std::size_t i, std::size_t like);
  Workload finish();

 private:
  Workload wl_;
  std::vector<char> simulated_;  // by global rank
  std::map<std::pair<GroupKind, std::vector<int>>, std::uint32_t> group_ids_;
  std::unordered_map<KernelDesc, std::uint32_t, KernelKeyHash, KernelKeyEqual> kernel_ids_;
  std::unordered_map<CollectiveDesc, std::uint32_t, CollectiveKeyHash, CollectiveKeyEqual> coll_ids_;
  std::unordered_map<std::string, std::uint16_t, NameHash, std::equal_to<>> name_ids_;
};

}  // namespace trainsim
