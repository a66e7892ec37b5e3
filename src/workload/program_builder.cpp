#include "workload/program_builder.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/error.hpp"

namespace trainsim {

namespace {
std::uint64_t bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
// One 64-bit mixing step (the splitmix64 finaliser) per field.
std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  return h;
}
}  // namespace

std::size_t KernelKeyHash::operator()(const KernelDesc& d) const {
  std::uint64_t h = mix(static_cast<std::uint64_t>(d.kind), static_cast<std::uint64_t>(d.dtype));
  for (std::int64_t v : {d.m, d.n, d.k, d.batch}) h = mix(h, static_cast<std::uint64_t>(v));
  h = mix(h, d.causal ? 1u : 0u);
  h = mix(h, static_cast<std::uint64_t>(d.window));
  h = mix(h, bits(d.flops));
  h = mix(h, bits(d.seconds));
  return static_cast<std::size_t>(mix(h, bits(d.bytes)));
}

bool KernelKeyEqual::operator()(const KernelDesc& a, const KernelDesc& b) const {
  return a.kind == b.kind && a.dtype == b.dtype && a.m == b.m && a.n == b.n && a.k == b.k && a.batch == b.batch &&
         a.causal == b.causal && a.window == b.window && bits(a.flops) == bits(b.flops) &&
         bits(a.bytes) == bits(b.bytes) && bits(a.seconds) == bits(b.seconds);
}

std::size_t CollectiveKeyHash::operator()(const CollectiveDesc& d) const {
  std::uint64_t h = mix(static_cast<std::uint64_t>(d.kind), d.group);
  h = mix(h, static_cast<std::uint64_t>(d.bytes));
  h = mix(h, static_cast<std::uint64_t>(static_cast<std::uint8_t>(d.sender)));
  return static_cast<std::size_t>(mix(h, static_cast<std::uint64_t>(static_cast<std::uint16_t>(d.sms))));
}

void RankBuilder::host_wait(const std::vector<std::uint32_t>& ops) {
  for (const std::uint32_t op : ops) {
    TRAINSIM_CHECK(op < prog_.ops.size(), fmt::format("the host waits for op {}, not issued yet", op));
    if (std::find(host_wait_.begin(), host_wait_.end(), op) == host_wait_.end()) host_wait_.push_back(op);
  }
}

void RankBuilder::host_synchronize() {
  std::vector<std::uint32_t> last;
  for (const std::uint32_t op : last_on_stream_)
    if (op != kNoOp) last.push_back(op);
  host_wait(last);
}

std::uint32_t RankBuilder::append(Op op, const std::vector<std::uint32_t>& deps) {
  const std::vector<std::uint32_t>* all = &deps;
  if (!host_wait_.empty()) {
    // The ops the host waits for lead the op's deps (Op::host_waits), its other deps follow.
    TRAINSIM_CHECK(host_wait_.size() <= std::numeric_limits<std::uint8_t>::max(), "the host waits for too many ops");
    std::sort(host_wait_.begin(), host_wait_.end());
    ordered_deps_ = host_wait_;
    for (const std::uint32_t d : deps)
      if (!std::binary_search(host_wait_.begin(), host_wait_.end(), d)) ordered_deps_.push_back(d);
    op.host_waits = static_cast<std::uint8_t>(host_wait_.size());
    host_wait_.clear();
    all = &ordered_deps_;
  }
  if (all->size() > std::numeric_limits<std::uint16_t>::max()) throw Error("too many dependencies on one op");
  op.first_dep = static_cast<std::uint32_t>(prog_.deps.size());
  op.num_deps = static_cast<std::uint16_t>(all->size());
  prog_.deps.insert(prog_.deps.end(), all->begin(), all->end());
  prog_.ops.push_back(op);
  const auto id = static_cast<std::uint32_t>(prog_.ops.size() - 1);
  last_on_stream_[static_cast<std::size_t>(op.stream)] = id;
  return id;
}

Op RankBuilder::new_op(Op::Type type, Stream stream, const OpContext& ctx, std::string_view name) {
  Op op;
  op.type = type;
  op.stream = stream;
  op.phase = ctx.phase;
  op.name = wb_.name(name);
  op.layer = static_cast<std::int16_t>(ctx.layer);
  op.micro_batch = ctx.micro_batch;
  return op;
}

std::uint32_t RankBuilder::compute(const OpContext& ctx, std::string_view name, const KernelDesc& k, int launches) {
  TRAINSIM_CHECK(launches >= 0 && launches <= 255, fmt::format("op '{}' launches {} kernels", name, launches));
  Op op = new_op(Op::Type::Compute, Stream::Compute, ctx, name);
  op.launches = static_cast<std::uint8_t>(launches);
  op.desc = wb_.kernel(k);
  std::sort(frontier_.begin(), frontier_.end());
  frontier_.erase(std::unique(frontier_.begin(), frontier_.end()), frontier_.end());
  const auto id = append(op, frontier_);
  frontier_.clear();
  last_compute_ = id;
  return id;
}

std::uint32_t RankBuilder::compute_beside(const OpContext& ctx, Stream stream, std::string_view name,
                                          const KernelDesc& k) {
  Op op = new_op(Op::Type::Compute, stream, ctx, name);
  op.desc = wb_.kernel(k);
  std::vector<std::uint32_t> deps;
  if (last_compute_ >= 0) deps.push_back(static_cast<std::uint32_t>(last_compute_));
  return append(op, deps);
}

std::uint32_t RankBuilder::collective_on_sms(const OpContext& ctx, Stream stream, std::string_view name, CollKind kind,
                                             std::uint32_t group, std::int64_t bytes, int sms) {
  if (sms < 0 || sms > 32767)
    throw Error("workload: '" + std::string(name) + "' holds " + std::to_string(sms) + " SMs");
  CollectiveDesc desc{kind, group, bytes};
  desc.sms = static_cast<std::int16_t>(sms);
  return append_collective(ctx, stream, name, desc);
}

std::uint32_t RankBuilder::sync_token_exchange(const OpContext& ctx, Stream stream, std::string_view name,
                                               std::uint32_t group, std::int64_t bytes, const TokenExchange& exchange,
                                               int sms) {
  CollectiveDesc desc{CollKind::AllToAll, group, bytes};
  desc.sms = static_cast<std::int16_t>(sms);
  desc.exchange = exchange;
  const auto id = append_collective(ctx, stream, name, desc);
  wait(id);
  return id;
}

std::uint32_t RankBuilder::collective(const OpContext& ctx, Stream stream, std::string_view name, CollKind kind,
                                      std::uint32_t group, std::int64_t bytes, int sender) {
  CollectiveDesc desc{kind, group, bytes};
  if (sender >= 0) {
    const auto& ranks = wb_.group_ranks(group);
    const auto it = std::find(ranks.begin(), ranks.end(), sender);
    if (it == ranks.end())
      throw Error("workload: sender " + std::to_string(sender) + " is not in the group of '" + std::string(name) + "'");
    desc.sender = static_cast<std::int8_t>(it - ranks.begin());
  }
  return append_collective(ctx, stream, name, desc);
}

std::uint32_t RankBuilder::append_collective(const OpContext& ctx, Stream stream, std::string_view name,
                                             const CollectiveDesc& desc) {
  const std::uint32_t group = desc.group;
  Op op = new_op(Op::Type::Collective, stream, ctx, name);
  op.desc = wb_.collective(desc);
  op.coll_seq = seq_per_group_[group]++;
  // The communicator stream waits for the compute stream's current position, which includes the
  // last kernel and every wait recorded since.
  std::vector<std::uint32_t>& deps = collective_deps_;
  deps.assign(frontier_.begin(), frontier_.end());
  if (last_compute_ >= 0) deps.push_back(static_cast<std::uint32_t>(last_compute_));
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  return append(op, deps);
}

WorkloadBuilder::WorkloadBuilder(int world_size, std::vector<int> simulated_ranks) {
  wl_.world_size = world_size;
  simulated_.assign(static_cast<std::size_t>(world_size), 0);
  std::sort(simulated_ranks.begin(), simulated_ranks.end());
  for (int r : simulated_ranks) {
    simulated_[static_cast<std::size_t>(r)] = 1;
    RankProgram p;
    p.rank = r;
    wl_.ranks.push_back(std::move(p));
  }
}

bool WorkloadBuilder::is_simulated(int rank) const { return simulated_[static_cast<std::size_t>(rank)] != 0; }

std::uint32_t WorkloadBuilder::group(GroupKind kind, const std::vector<int>& members) {
  auto key = std::make_pair(kind, members);
  if (auto it = group_ids_.find(key); it != group_ids_.end()) return it->second;
  CommGroup g;
  g.kind = kind;
  g.ranks = members;
  for (int r : members) g.simulated_members += is_simulated(r) ? 1 : 0;
  const auto id = static_cast<std::uint32_t>(wl_.groups.size());
  wl_.groups.push_back(std::move(g));
  group_ids_.emplace(std::move(key), id);
  return id;
}

std::uint32_t WorkloadBuilder::kernel(const KernelDesc& k) {
  auto [it, inserted] = kernel_ids_.try_emplace(k, static_cast<std::uint32_t>(wl_.kernels.size()));
  if (inserted) wl_.kernels.push_back(k);
  return it->second;
}

std::uint32_t WorkloadBuilder::collective(const CollectiveDesc& c) {
  auto [it, inserted] = coll_ids_.try_emplace(c, static_cast<std::uint32_t>(wl_.collectives.size()));
  if (inserted) wl_.collectives.push_back(c);
  return it->second;
}

std::uint16_t WorkloadBuilder::name(std::string_view n) {
  if (const auto it = name_ids_.find(n); it != name_ids_.end()) return it->second;
  if (wl_.names.size() >= std::numeric_limits<std::uint16_t>::max()) throw Error("too many distinct op names");
  const auto id = static_cast<std::uint16_t>(wl_.names.size());
  name_ids_.emplace(std::string(n), id);
  wl_.names.emplace_back(n);
  return id;
}

void WorkloadBuilder::reserve_like(std::size_t i, std::size_t like) {
  const RankProgram& model = wl_.ranks[like];
  RankProgram& p = wl_.ranks[i];
  p.ops.reserve(model.ops.size() + model.ops.size() / 4);
  p.deps.reserve(model.deps.size() + model.deps.size() / 4);
}

Workload WorkloadBuilder::finish() { return std::move(wl_); }

}  // namespace trainsim
