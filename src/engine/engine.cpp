#include "engine/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

#include "core/check.hpp"
#include "core/error.hpp"
#include "engine/event_queue.hpp"

namespace trainsim {

namespace {

constexpr std::uint32_t kNone = 0xffffffffu;
// An event whose op carries this bit is the host issuing that op (its predecessors had finished before).
constexpr std::uint32_t kIssueBit = 0x80000000u;
// An event whose op carries this bit is a compute kernel's end: only those can be stale (re-timed), and the bit
// says so without reading the op's plan record, a cache miss per event.
constexpr std::uint32_t kKernelEndBit = 0x40000000u;
constexpr std::uint32_t kOpBits = ~(kIssueBit | kKernelEndBit);

EngineRankPlan plan_rank(const Workload& wl, const RankProgram& p, SimTime host_launch) {
  EngineRankPlan s;
  const std::size_t n = p.ops.size();
  TRAINSIM_CHECK(n < kKernelEndBit, fmt::format("rank {}: {} ops exceed the engine's op index range", p.rank, n));
  s.ops.resize(n + 1);
  std::uint32_t last_on_stream[kNumStreams];
  std::fill(std::begin(last_on_stream), std::end(last_on_stream), kNone);
  std::vector<std::uint32_t> count(n + 1, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    const Op& op = p.ops[i];
    PlannedOp& po = s.ops[i];
    po.stream_next = kNone;
    po.desc = op.desc;
    po.type = op.type;
    if (op.type == Op::Type::Collective) po.alone = wl.groups[wl.collectives[op.desc].group].simulated_members <= 1;
    if (op.host_waits > 0) {
      TRAINSIM_CHECK(op.host_waits <= op.num_deps,
                     fmt::format("rank {}: op {} makes the host wait for {} of its {} dependencies", p.rank, i,
                                 op.host_waits, op.num_deps));
      po.host_sync = true;
      s.host_syncs.push_back(i);
    }
    if (op.type == Op::Type::Compute) {
      po.optimizer = op.phase == Phase::Optimizer;
      po.scheduled = op.phase == Phase::Forward || op.phase == Phase::Backward || op.phase == Phase::Recompute;
    }
    auto& last = last_on_stream[static_cast<int>(op.stream)];
    if (last != kNone) {
      s.ops[last].stream_next = i;
      po.pending = 1;
    }
    last = i;
    TRAINSIM_CHECK(op.num_deps < 0xffff, fmt::format("rank {}: op {} has {} dependencies, more than the engine counts",
                                                     p.rank, i, op.num_deps));
    po.pending = static_cast<std::uint16_t>(po.pending + op.num_deps);
    for (std::uint32_t k = 0; k < op.num_deps; ++k) {
      const auto dep = p.deps[op.first_dep + k];
      TRAINSIM_CHECK(dep < i, fmt::format("rank {}: op {} depends on a later op {}", p.rank, i, dep));
      count[dep + 1] += 1;
    }
  }
  for (std::size_t i = 0; i < n; ++i) count[i + 1] += count[i];
  for (std::size_t i = 0; i <= n; ++i) s.ops[i].dep_begin = count[i];
  s.dependents.resize(count[n]);
  std::vector<std::uint32_t> fill(count.begin(), count.end() - 1);
  for (std::uint32_t i = 0; i < n; ++i) {
    const Op& op = p.ops[i];
    for (std::uint32_t k = 0; k < op.num_deps; ++k) s.dependents[fill[p.deps[op.first_dep + k]]++] = i;
  }
  if (host_launch > 0) {
    std::uint64_t launches = 0;
    for (std::size_t i = 0; i < n; ++i) {
      launches += p.ops[i].launches;
      TRAINSIM_CHECK(launches <= 0xffffffffu,
                     fmt::format("rank {}: more kernel launches than the engine counts", p.rank));
      s.ops[i].launches = static_cast<std::uint32_t>(launches);
    }
  }
  return s;
}

// std::llround (halves away from zero) of a time, without the library call that was a tenth of the engine's
// instructions. Exact: for |x| < 2^53 the truncation and the fraction are exact; beyond, x is an integer already.
std::int64_t round_time(double x) {
  if (!(std::fabs(x) < 9007199254740992.0)) return std::llround(x);
  auto i = static_cast<std::int64_t>(x);
  const double frac = x - static_cast<double>(i);
  if (frac >= 0.5)
    ++i;
  else if (frac <= -0.5)
    --i;
  return i;
}

// A compute kernel in flight and how fast it progresses: `left` picoseconds of work at full speed
// remain as of `since`, progressing at 1 / `factor` (the interference slowdown).
struct RunningKernel {
  std::uint32_t op = 0;
  SimTime nominal = 0;  // its time alone (with any straggler slowdown)
  double left = 0;
  double factor = 1;
  SimTime since = 0;
  SimTime end = 0;
};

// The collectives in flight on one rank, summed. HBM in MB/s integers so that adding and removing
// the same calls returns exactly to idle.
struct RankCommLoad {
  int ctas = 0;
  std::int64_t hbm_MBps = 0;
  int planned_ctas = 0;  // of ctas, Transformer Engine userbuffers' (CommLoad::planned_ctas)
};

// One rank's RankActivity as the run goes: what runs on it now (kernels, collectives by class, a wait for the
// host), and the sums so far. Every change of what runs first hands the time since the last change to what ran.
class ActivityMeter {
 public:
  void advance(SimTime now) {
    const SimTime len = now - since_;
    since_ = now;
    if (len <= 0) return;
    if (kernels_ > optimizer_kernels_)
      sums_.compute += len;
    else if (kernels_ > 0)
      sums_.optimizer += len;
    else if (exposed_ != 0)
      sums_.exposed[static_cast<std::size_t>(std::countr_zero(exposed_))] += len;
    else if (host_waits_ > 0)
      sums_.host += len;
    else
      idle_ += len;
  }
  void kernel(int sign, bool optimizer) {
    kernels_ += sign;
    if (optimizer) optimizer_kernels_ += sign;
  }
  void collective(std::uint8_t cls, int sign) {
    running_[cls] += sign;
    const auto bit = static_cast<std::uint32_t>(1u << cls);
    exposed_ = running_[cls] > 0 ? exposed_ | bit : exposed_ & ~bit;
  }
  void host_wait(int sign) { host_waits_ += sign; }
  // A forward, backward or recompute kernel has ended: the idle time so far is before the schedule's end.
  void scheduled_kernel_ended() { idle_scheduled_ = idle_; }
  RankActivity close(SimTime makespan) {
    advance(makespan);
    sums_.idle_scheduled = idle_scheduled_;
    sums_.idle_after = idle_ - idle_scheduled_;
    return sums_;
  }

 private:
  SimTime since_ = 0;
  int kernels_ = 0, optimizer_kernels_ = 0, host_waits_ = 0;
  std::array<int, kExposedClasses> running_{};  // collectives in flight, by class
  std::uint32_t exposed_ = 0;                   // bit c: running_[c] > 0
  SimTime idle_ = 0, idle_scheduled_ = 0;
  RankActivity sums_;
};

// Where one rank's host thread is (EngineOptions::host_launch, Op::host_waits). It issues op i at
// anchor.time + host_launch x (launches of ops up to i - anchor.launches), from the last anchor at or before i; each
// host wait it has passed set an anchor where the wait ended. Ops past a wait the host has not passed yet are
// parked, ready on the GPU side but not issued.
struct HostClock {
  struct Anchor {
    std::uint32_t op = 0;        // the first op issued from it
    std::uint32_t launches = 0;  // launches of the ops before it (PlannedOp::launches of op - 1)
    SimTime time = 0;            // when the host, done waiting, starts issuing op
  };
  std::vector<Anchor> anchors{Anchor{}};  // in program order
  std::size_t next_sync = 0;              // into EngineRankPlan::host_syncs: the first the host has not passed
  std::vector<std::uint16_t> waits_left;  // per host sync: ops it waits for that have not finished
  std::vector<SimTime> waits_end;         // per host sync: when the last of those finished so far
  struct Parked {
    std::uint32_t op = 0;
    SimTime since = 0;
  };
  std::vector<Parked> parked;
};

struct Rendezvous {
  std::uint32_t arrived = 0;
  std::uint32_t desc = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> members;  // (rank index, op)
};

class Simulator {
 public:
  Simulator(const Workload& wl, const ComputeModel& compute, const CollectiveModel& coll, const ClusterSpec& cluster,
            const EngineOptions& opt)
      : wl_(wl), compute_(compute), opt_(opt), plan_(the_plan(wl, compute, opt)) {
    out_.kernel_timings = plan_.kernel_timings;
    if (opt.estimates != nullptr) {
      TRAINSIM_CHECK(opt.estimates->size() == wl.collectives.size(),
                     "engine: the estimates given were made for another workload");
      out_.collective_estimates = *opt.estimates;
    } else {
      out_.collective_estimates = estimate_collectives(wl, coll, cluster, opt.copy_placements);
    }
    note_call_loads();
    if (opt.activity) {
      TRAINSIM_CHECK(opt.exposed_class.size() == wl.groups.size(),
                     "engine: exposed_class must give every group's class");
      call_class_.reserve(wl.collectives.size());
      for (const auto& c : wl.collectives) {
        const std::uint8_t cls = opt.exposed_class[c.group];
        TRAINSIM_CHECK(cls < kExposedClasses, fmt::format("engine: exposed class {} out of range", cls));
        call_class_.push_back(cls);
      }
      meters_.resize(wl.ranks.size());
    }
    pending_ops_.reserve(wl.ranks.size());
    hosts_.reserve(wl.ranks.size());
    out_.timelines.resize(wl.ranks.size());
    out_.interference.assign(wl.ranks.size(), 0);
    out_.host_waits.resize(wl.ranks.size());
    running_.resize(wl.ranks.size());
    loads_.resize(wl.ranks.size());
    std::size_t total_ops = 0;
    for (std::size_t r = 0; r < wl.ranks.size(); ++r) {
      const auto& planned = plan_.ranks[r].ops;
      auto& pending = pending_ops_.emplace_back(wl.ranks[r].ops.size());
      for (std::size_t i = 0; i < pending.size(); ++i) pending[i] = planned[i].pending;
      HostClock& hc = hosts_.emplace_back();
      for (const std::uint32_t op : plan_.ranks[r].host_syncs) {
        hc.waits_left.push_back(wl.ranks[r].ops[op].host_waits);
        hc.waits_end.push_back(0);
      }
      out_.timelines[r].start.assign(wl.ranks[r].ops.size(), -1);
      out_.timelines[r].end.assign(wl.ranks[r].ops.size(), -1);
      total_ops += wl.ranks[r].ops.size();
    }
    total_ops_ = static_cast<std::int64_t>(total_ops);
  }

  SimulationOutput run() {
    for (std::uint32_t r = 0; r < wl_.ranks.size(); ++r)
      for (std::uint32_t i = 0; i < wl_.ranks[r].ops.size(); ++i)
        if (pending_ops_[r][i] == 0) become_ready(r, i, 0);
    std::vector<std::uint64_t> completed;
    std::int64_t processed = 0, until_report = opt_.progress_every;
    while (true) {
      const SimTime tq = queue_.empty() ? kNever : queue_.top().time;
      const SimTime tn = opt_.network != nullptr ? opt_.network->next_event() : kNever;
      if (tq == kNever && tn == kNever) break;
      ++processed;
      if (opt_.progress && --until_report <= 0) {
        until_report = opt_.progress_every;
        opt_.progress(EngineProgress{std::min(tq, tn), processed, ops_done_, total_ops_});
      }
      if (tn <= tq) {  // the network's events at an instant go first (deterministic either way)
        opt_.network->advance(tn, completed);
        for (std::uint64_t token : completed) complete_collective(token, tn);
        continue;
      }
      const Event e = queue_.pop();
      if (e.op & kIssueBit) {
        if (!meters_.empty() && plan_.ranks[e.rank].ops[e.op & kOpBits].type == Op::Type::Compute) {
          meters_[e.rank].advance(e.time);
          meters_[e.rank].host_wait(-1);
        }
        start(e.rank, e.op & kOpBits, e.time);
        continue;
      }
      if ((e.op & kKernelEndBit) && stale(e.rank, e.op & kOpBits, e.time)) {
        ++stale_events_;
        continue;
      }
      finish(e.rank, e.op & kOpBits, e.time);
    }
    out_.events = static_cast<std::int64_t>(queue_.pushed() - stale_events_);  // events that happened
    check_complete();
    out_.activity.reserve(meters_.size());
    for (ActivityMeter& m : meters_) out_.activity.push_back(m.close(out_.makespan));
    return std::move(out_);
  }

 private:
  // The first op the host has not got to because it still waits (Op::host_waits), or kNone.
  std::uint32_t host_blocked_at(std::uint32_t r) const {
    const auto& syncs = plan_.ranks[r].host_syncs;
    const std::size_t k = hosts_[r].next_sync;
    return k < syncs.size() ? syncs[k] : kNone;
  }

  // When the host issues op i (its launches included), i being before any wait it has not passed.
  SimTime issue_time(std::uint32_t r, std::uint32_t i) const {
    const auto& anchors = hosts_[r].anchors;
    const auto it = std::upper_bound(anchors.begin(), anchors.end(), i,
                                     [](std::uint32_t op, const HostClock::Anchor& a) { return op < a.op; });
    const HostClock::Anchor& a = *(it - 1);
    return a.time + plan_.host_launch * (plan_.ranks[r].ops[i].launches - a.launches);
  }

  // Its predecessors have finished; it starts once the host has issued it.
  void become_ready(std::uint32_t r, std::uint32_t i, SimTime now) {
    const PlannedOp& po = plan_.ranks[r].ops[i];
    if (i >= host_blocked_at(r)) {  // the host waits before it gets here
      hosts_[r].parked.push_back({i, now});
      if (po.type == Op::Type::Compute && !meters_.empty()) {
        meters_[r].advance(now);
        meters_[r].host_wait(+1);
      }
      return;
    }
    const SimTime issued = issue_time(r, i);
    if (issued > now) {
      if (po.type == Op::Type::Compute) {
        out_.host_waits[r].emplace_back(now, issued);
        if (!meters_.empty()) {
          meters_[r].advance(now);
          meters_[r].host_wait(+1);
        }
      }
      queue_.push(issued, r, i | kIssueBit);
      return;
    }
    start(r, i, now);
  }

  void start(std::uint32_t r, std::uint32_t i, SimTime now) {
    const PlannedOp& po = plan_.ranks[r].ops[i];
    if (po.type == Op::Type::Compute) {
      SimTime dur = out_.kernel_timings[po.desc].time;
      if (!opt_.compute_slowdown.empty() && opt_.compute_slowdown[r] != 1.0)
        dur = static_cast<SimTime>(static_cast<double>(dur) * opt_.compute_slowdown[r]);
      out_.timelines[r].start[i] = now;
      if (!meters_.empty()) {
        meters_[r].advance(now);
        meters_[r].kernel(+1, po.optimizer);
      }
      if (!opt_.interference) {
        queue_.push(now + dur, r, i | kKernelEndBit);
        return;
      }
      const double factor = slowdown(po.desc, loads_[r]);
      RunningKernel& k = running_[r].emplace_back();  // filled in place: no temporary copied in
      k.op = i;
      k.nominal = dur;
      k.left = static_cast<double>(dur);
      k.factor = factor;
      k.since = now;
      // Nothing beside it (the common case): its own time, which is what rounding the product gives below 2^53 ps.
      const bool exact = factor == 1.0 && dur < (SimTime{1} << 53);
      k.end = now + (exact ? dur : round_time(k.left * factor));
      queue_.push(k.end, r, i | kKernelEndBit);
      return;
    }
    if (po.alone && opt_.network == nullptr) {  // no other member to wait for: no rendezvous
      collective_runs(r, po.desc, +1, now);
      add_load(r, po.desc, +1, now);
      out_.timelines[r].start[i] = now;
      queue_.push(now + out_.collective_estimates[po.desc].time, r, i);
      return;
    }
    const Op& op = wl_.ranks[r].ops[i];
    const CollectiveDesc& cd = wl_.collectives[op.desc];
    const CommGroup& g = wl_.groups[cd.group];
    const std::uint64_t key = (static_cast<std::uint64_t>(cd.group) << 32) | op.coll_seq;
    Rendezvous& rv = pending_[key];
    if (rv.arrived == 0) rv.desc = op.desc;
    if (rv.desc != op.desc) {
      const auto& other = wl_.collectives[rv.desc];
      throw Error(fmt::format(
          "collective mismatch on {} group {}: call #{} is {} of {} bytes on rank {} but {} of {} bytes on rank {}",
          to_string(g.kind), group_label(g), op.coll_seq, to_string(cd.kind), cd.bytes, wl_.ranks[r].rank,
          to_string(other.kind), other.bytes, wl_.ranks[rv.members.front().first].rank));
    }
    rv.arrived += 1;
    rv.members.emplace_back(r, i);
    if (rv.arrived < static_cast<std::uint32_t>(g.simulated_members)) return;
    for (auto [mr, mi] : rv.members) {
      collective_runs(mr, op.desc, +1, now);
      add_load(mr, op.desc, +1, now);
    }
    if (opt_.network != nullptr) {
      for (auto [mr, mi] : rv.members) out_.timelines[mr].start[mi] = now;
      const std::uint64_t token = next_token_++;
      in_flight_.emplace(token, std::move(rv.members));
      pending_.erase(key);
      opt_.network->start(now, token, CollectiveCall{cd.kind, cd.bytes, cd.group, cd.sender, cd.exchange});
      return;
    }
    const SimTime dur = out_.collective_estimates[op.desc].time;
    for (auto [mr, mi] : rv.members) {
      out_.timelines[mr].start[mi] = now;
      queue_.push(now + dur, mr, mi);
    }
    pending_.erase(key);
  }

  // A collective the network backend has finished: its members' ops end now.
  void complete_collective(std::uint64_t token, SimTime now) {
    const auto it = in_flight_.find(token);
    TRAINSIM_CHECK(it != in_flight_.end(), fmt::format("network backend completed unknown call {}", token));
    const auto members = std::move(it->second);
    in_flight_.erase(it);
    for (auto [mr, mi] : members) finish(mr, mi, now);
  }

  // A collective starts (+1) or ends (-1) on rank r: its RankActivity class runs or stops.
  void collective_runs(std::uint32_t r, std::uint32_t desc, int sign, SimTime now) {
    if (meters_.empty()) return;
    meters_[r].advance(now);
    meters_[r].collective(call_class_[desc], sign);
  }

  // Collectives take CTAs and HBM bandwidth from the kernels beside them (docs/compute-model.md §1.4).
  // Their estimate gives both: one CTA per channel (or the SMs the workload says the call holds,
  // CollectiveDesc::sms), and twice the bus bandwidth in HBM traffic (each byte sent is read from
  // memory, each byte received written to it).
  void add_load(std::uint32_t r, std::uint32_t desc, int sign, SimTime now) {
    if (!opt_.interference) return;
    const RankCommLoad& call = call_loads_[desc];
    if (call.ctas == 0 && call.hbm_MBps == 0) return;
    RankCommLoad& l = loads_[r];
    l.ctas += sign * call.ctas;
    l.hbm_MBps += sign * call.hbm_MBps;
    l.planned_ctas += sign * call.planned_ctas;
    retime(r, now);
  }

  // What each collective takes from the GPU while it runs (add_load), worked out once per call kind.
  void note_call_loads() {
    call_loads_.resize(wl_.collectives.size());
    for (std::size_t d = 0; d < wl_.collectives.size(); ++d) {
      const CollectiveEstimate& est = out_.collective_estimates[d];
      const bool userbuffers = wl_.collectives[d].sms >= 0;
      const int sms = userbuffers ? wl_.collectives[d].sms : est.channels;
      if (sms <= 0 && !(est.busbw_GBps > 0)) continue;
      call_loads_[d] = RankCommLoad{sms, std::llround(2.0 * est.busbw_GBps * 1e3), userbuffers ? sms : 0};
    }
  }

  double slowdown(std::uint32_t desc, const RankCommLoad& l) {
    if (l.ctas <= 0 && l.hbm_MBps <= 0) return 1.0;
    const auto key = std::make_tuple(desc, l.ctas, l.hbm_MBps, l.planned_ctas);
    const auto it = slowdowns_.find(key);
    if (it != slowdowns_.end()) return it->second;
    const double f = compute_.interference_slowdown(
        wl_.kernels[desc], CommLoad{l.ctas, static_cast<double>(l.hbm_MBps) * 1e-3, l.planned_ctas});
    TRAINSIM_CHECK(std::isfinite(f) && f >= 1.0,
                   fmt::format("compute model gave an interference slowdown of {} (must be >= 1)", f));
    slowdowns_.emplace(key, f);
    return f;
  }

  // The rank's load changed: kernels in flight keep the work done so far and finish the rest at the
  // new speed. Their old end events become stale (see stale()).
  void retime(std::uint32_t r, SimTime now) {
    for (RunningKernel& k : running_[r]) {
      const double f = slowdown(plan_.ranks[r].ops[k.op].desc, loads_[r]);
      if (f == k.factor) continue;
      k.left = std::max(0.0, k.left - static_cast<double>(now - k.since) / k.factor);
      k.factor = f;
      k.since = now;
      const SimTime end = now + round_time(k.left * k.factor);
      if (end == k.end) continue;
      k.end = end;
      queue_.push(end, r, k.op | kKernelEndBit);
    }
  }

  // An end event of a kernel that was re-timed after it was queued.
  bool stale(std::uint32_t rank, std::uint32_t op, SimTime time) const {
    if (!opt_.interference) return false;
    for (const RunningKernel& k : running_[rank])
      if (k.op == op) return k.end != time;
    return true;  // already finished
  }

  void finish(std::uint32_t r, std::uint32_t i, SimTime now) {
    const EngineRankPlan& st = plan_.ranks[r];
    const PlannedOp& po = st.ops[i];
    auto& pending = pending_ops_[r];
    if (!meters_.empty()) {
      if (po.type == Op::Type::Compute) {
        meters_[r].advance(now);
        meters_[r].kernel(-1, po.optimizer);
        if (po.scheduled && now > out_.timelines[r].start[i]) meters_[r].scheduled_kernel_ended();
      } else {
        collective_runs(r, po.desc, -1, now);
      }
    }
    if (opt_.interference) {
      if (po.type == Op::Type::Compute) {
        auto& run = running_[r];
        const auto it = std::find_if(run.begin(), run.end(), [&](const RunningKernel& k) { return k.op == i; });
        if (it != run.end()) {
          out_.interference[r] += std::max<SimTime>(0, now - out_.timelines[r].start[i] - it->nominal);
          run.erase(it);
        }
      } else {
        add_load(r, po.desc, -1, now);
      }
    }
    out_.timelines[r].end[i] = now;  // >= 0: finished (see check_complete)
    ++ops_done_;
    out_.makespan = std::max(out_.makespan, now);
    auto release = [&](std::uint32_t j) {
      if (--pending[j] == 0) become_ready(r, j, now);
    };
    {
      // A rank runs its ops roughly in program order, so the ones a little further on are next: their plan record,
      // pending count, timeline slots and dependents' list fetched now are in cache when they start and finish. The
      // engine waits on those loads otherwise (eight ranks' arrays interleave; a point of the 1,000-point sweep runs
      // ~8% faster).
      const std::size_t ahead = std::min<std::size_t>(i + 16, pending.size() - 1);
      __builtin_prefetch(&st.ops[ahead]);
      __builtin_prefetch(&pending[ahead], 1);
      __builtin_prefetch(&out_.timelines[r].start[ahead], 1);
      __builtin_prefetch(&out_.timelines[r].end[ahead], 1);
      if (!st.dependents.empty())
        __builtin_prefetch(&st.dependents[std::min<std::size_t>(po.dep_begin + 32, st.dependents.size() - 1)]);
    }
    if (po.stream_next != kNone) release(po.stream_next);
    bool host_waited = false;
    for (std::uint32_t k = po.dep_begin, end = st.ops[i + 1].dep_begin; k < end; ++k) {
      const std::uint32_t j = st.dependents[k];
      if (st.ops[j].host_sync) host_waited |= host_wait_ended(r, j, i, now);
      release(j);
    }
    if (host_waited) pass_host_waits(r, now);
  }

  // Op `done` finished: if host sync `j` waits for it (one of its first Op::host_waits deps), count it; true if j's
  // wait is over.
  bool host_wait_ended(std::uint32_t r, std::uint32_t j, std::uint32_t done, SimTime now) {
    const Op& op = wl_.ranks[r].ops[j];
    const auto* first = wl_.ranks[r].deps.data() + op.first_dep;
    if (std::find(first, first + op.host_waits, done) == first + op.host_waits) return false;
    const auto& syncs = plan_.ranks[r].host_syncs;
    const auto k = static_cast<std::size_t>(std::lower_bound(syncs.begin(), syncs.end(), j) - syncs.begin());
    HostClock& hc = hosts_[r];
    hc.waits_end[k] = std::max(hc.waits_end[k], now);
    return --hc.waits_left[k] == 0;
  }

  // The host passes every wait whose ops have all finished, in program order, and issues the ops parked behind them.
  void pass_host_waits(std::uint32_t r, SimTime now) {
    HostClock& hc = hosts_[r];
    const auto& syncs = plan_.ranks[r].host_syncs;
    const auto& ops = plan_.ranks[r].ops;
    bool passed = false;
    while (hc.next_sync < syncs.size() && hc.waits_left[hc.next_sync] == 0) {
      const std::uint32_t w = syncs[hc.next_sync];
      const std::uint32_t before = w == 0 ? 0 : ops[w - 1].launches;  // PlannedOp::launches counts up to its op
      const HostClock::Anchor& last = hc.anchors.back();
      const SimTime reached = last.time + plan_.host_launch * (before - last.launches);
      hc.anchors.push_back({w, before, std::max(reached, hc.waits_end[hc.next_sync])});
      ++hc.next_sync;
      passed = true;
    }
    if (!passed) return;
    const std::uint32_t blocked = host_blocked_at(r);
    std::vector<HostClock::Parked> still;
    std::vector<HostClock::Parked> go;
    for (const HostClock::Parked& p : hc.parked) (p.op < blocked ? go : still).push_back(p);
    hc.parked = std::move(still);
    std::sort(go.begin(), go.end(), [](const auto& a, const auto& b) { return a.op < b.op; });
    for (const HostClock::Parked& p : go) issue_parked(r, p, now);
  }

  // A parked op the host now issues: it starts when issued, having waited for the host since it was parked.
  void issue_parked(std::uint32_t r, const HostClock::Parked& p, SimTime now) {
    const PlannedOp& po = plan_.ranks[r].ops[p.op];
    const SimTime issued = std::max(issue_time(r, p.op), now);
    const bool compute = po.type == Op::Type::Compute;
    if (compute && issued > p.since) out_.host_waits[r].emplace_back(p.since, issued);
    if (issued > now) {
      queue_.push(issued, r, p.op | kIssueBit);  // the issue event ends the host wait counted since it was parked
      return;
    }
    if (compute && !meters_.empty()) {
      meters_[r].advance(now);
      meters_[r].host_wait(-1);
    }
    start(r, p.op, now);
  }

  static std::string group_label(const CommGroup& g) {
    std::string s = "[";
    for (std::size_t i = 0; i < g.ranks.size() && i < 8; ++i) s += (i ? "," : "") + std::to_string(g.ranks[i]);
    if (g.ranks.size() > 8) s += ",...";
    return s + "]";
  }

  void check_complete() {
    std::vector<std::string> waiting;
    for (std::uint32_t r = 0; r < wl_.ranks.size(); ++r) {
      const auto& prog = wl_.ranks[r];
      const auto& ended = out_.timelines[r].end;
      // Report, per stream, the first op that never finished and why it is stuck.
      bool seen[kNumStreams] = {};
      for (std::uint32_t i = 0; i < prog.ops.size(); ++i) {
        const Op& op = prog.ops[i];
        if (ended[i] >= 0 || seen[static_cast<int>(op.stream)]) continue;
        seen[static_cast<int>(op.stream)] = true;
        std::string what =
            fmt::format("rank {} {} stream: op #{} '{}'", prog.rank, to_string(op.stream), i, wl_.names[op.name]);
        if (op.type == Op::Type::Collective) {
          const auto& cd = wl_.collectives[op.desc];
          const auto& g = wl_.groups[cd.group];
          const std::uint64_t key = (static_cast<std::uint64_t>(cd.group) << 32) | op.coll_seq;
          const auto it = pending_.find(key);
          const bool arrived = out_.timelines[r].start[i] < 0 && it != pending_.end() &&
                               std::any_of(it->second.members.begin(), it->second.members.end(),
                                           [&](auto& m) { return m.first == r && m.second == i; });
          what += fmt::format(" ({} on {} group {}, call #{}): {}", to_string(cd.kind), to_string(g.kind),
                              group_label(g), op.coll_seq,
                              arrived ? fmt::format("waiting for {} more member(s)",
                                                    g.simulated_members - static_cast<int>(it->second.arrived))
                                      : "waiting for its predecessors");
        } else {
          what += ": waiting for its predecessors";
        }
        waiting.push_back(std::move(what));
      }
    }
    if (waiting.empty()) return;
    std::string msg = "deadlock: the workload cannot make progress; waiting:";
    for (std::size_t i = 0; i < waiting.size() && i < 32; ++i) msg += "\n  " + waiting[i];
    if (waiting.size() > 32) msg += fmt::format("\n  ... and {} more", waiting.size() - 32);
    throw DeadlockError(msg);
  }

  using SlowdownKey = std::tuple<std::uint32_t, int, std::int64_t, int>;  // kernel, CTAs, HBM MB/s, planned CTAs
  struct KeyHash {
    std::size_t operator()(const SlowdownKey& k) const {
      std::size_t h = std::get<0>(k);
      h = h * 1000003u ^ static_cast<std::size_t>(std::get<1>(k));
      h = h * 1000003u ^ static_cast<std::size_t>(std::get<2>(k));
      h = h * 1000003u ^ static_cast<std::size_t>(std::get<3>(k));
      return h;
    }
  };

  // The caller's plan, checked against this run's workload, or one made for this run alone.
  const EnginePlan& the_plan(const Workload& wl, const ComputeModel& compute, const EngineOptions& opt) {
    if (opt.plan == nullptr) {
      own_plan_ = plan_engine(wl, compute, opt.host_launch);
      return own_plan_;
    }
    TRAINSIM_CHECK(opt.plan->host_launch == opt.host_launch && opt.plan->ranks.size() == wl.ranks.size() &&
                       opt.plan->kernel_timings.size() == wl.kernels.size(),
                   "engine: the plan given was made for another workload or host launch cost");
    for (std::size_t r = 0; r < wl.ranks.size(); ++r)
      TRAINSIM_CHECK(opt.plan->ranks[r].ops.size() == wl.ranks[r].ops.size() + 1,
                     "engine: the plan given was made for another workload");
    return *opt.plan;
  }

  const Workload& wl_;
  const ComputeModel& compute_;
  const EngineOptions& opt_;
  EnginePlan own_plan_;
  const EnginePlan& plan_;
  std::vector<std::vector<RunningKernel>> running_;  // per rank
  std::vector<RankCommLoad> loads_;                  // per rank
  std::vector<RankCommLoad> call_loads_;             // per Workload::collectives entry
  std::unordered_map<SlowdownKey, double, KeyHash> slowdowns_;
  SimulationOutput out_;
  std::vector<std::vector<std::uint32_t>> pending_ops_;  // per rank and op: predecessors not yet finished
  std::vector<HostClock> hosts_;                         // per rank
  EventQueue queue_;
  std::unordered_map<std::uint64_t, Rendezvous> pending_;
  std::unordered_map<std::uint64_t, std::vector<std::pair<std::uint32_t, std::uint32_t>>> in_flight_;  // by token
  std::vector<ActivityMeter> meters_;     // per rank; empty without EngineOptions::activity
  std::vector<std::uint8_t> call_class_;  // per Workload::collectives entry: its group's exposed class
  std::uint64_t next_token_ = 0;
  std::uint64_t stale_events_ = 0;             // end events of re-timed kernels, skipped
  std::int64_t ops_done_ = 0, total_ops_ = 0;  // for progress reports
};

}  // namespace

std::vector<CollectiveEstimate> estimate_collectives(const Workload& wl, const CollectiveModel& coll,
                                                     const ClusterSpec& cluster,
                                                     const std::vector<std::vector<GroupPlacement>>& copy_placements) {
  // A group is placed when one of its calls first needs it: groups whose calls are all priced on their copies'
  // placements, or that have no call at all, are never placed.
  std::vector<std::optional<GroupPlacement>> placements(wl.groups.size());
  const auto placed = [&](std::uint32_t group) -> const GroupPlacement& {
    std::optional<GroupPlacement>& p = placements[group];
    if (!p) p = GroupPlacement::of(wl.groups[group].ranks, cluster);
    return *p;
  };
  std::vector<CollectiveEstimate> estimates;
  estimates.reserve(wl.collectives.size());
  for (const auto& c : wl.collectives) {
    const auto& g = wl.groups[c.group];
    if (g.ranks.size() <= 1) {  // no other member: no communication
      estimates.push_back(CollectiveEstimate{});
      continue;
    }
    const bool has_copies = c.group < copy_placements.size() && !copy_placements[c.group].empty();
    estimates.push_back(has_copies ? slowest_copy_estimate(coll, c.kind, c.bytes, copy_placements[c.group], c.exchange)
                                   : estimate_call(coll, c.kind, c.bytes, c.exchange, placed(c.group)));
  }
  return estimates;
}

EnginePlan plan_engine(const Workload& wl, const ComputeModel& compute, SimTime host_launch) {
  EnginePlan plan;
  plan.host_launch = host_launch;
  plan.kernel_timings.reserve(wl.kernels.size());
  for (const auto& k : wl.kernels) plan.kernel_timings.push_back(compute.time(k));
  plan.ranks.reserve(wl.ranks.size());
  for (const RankProgram& p : wl.ranks) plan.ranks.push_back(plan_rank(wl, p, host_launch));
  return plan;
}

SimulationOutput simulate(const Workload& wl, const ComputeModel& compute, const CollectiveModel& collectives,
                          const ClusterSpec& cluster, const EngineOptions& options) {
  Simulator sim(wl, compute, collectives, cluster, options);
  return sim.run();
}

}  // namespace trainsim
