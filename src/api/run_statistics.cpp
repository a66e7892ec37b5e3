#include "api/run_statistics.hpp"

#include "api/compute_intervals.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/check.hpp"

namespace trainsim {

namespace {

enum Category { kTP, kCP, kPP, kEP, kDP, kOther, kCategories };

Category category_of(GroupKind k) {
  switch (k) {
    case GroupKind::TP: return kTP;
    case GroupKind::CP: return kCP;
    case GroupKind::PP: return kPP;
    case GroupKind::DP:
    case GroupKind::ExpertDP:
    case GroupKind::Embedding: return kDP;
    case GroupKind::EP:
    case GroupKind::ExpertTP:
    case GroupKind::ExpertTPxEP: return kEP;
    default: return kOther;
  }
}

}  // namespace

void keep_activity(const Workload& wl, EngineOptions& options) {
  static_assert(kCategories <= kExposedClasses);
  options.activity = true;
  options.exposed_class.clear();
  options.exposed_class.reserve(wl.groups.size());
  for (const CommGroup& g : wl.groups) options.exposed_class.push_back(static_cast<std::uint8_t>(category_of(g.kind)));
}

Breakdown breakdown_of(const SimulationOutput& out, std::size_t ri) {
  TRAINSIM_CHECK(ri < out.activity.size(),
                 "breakdown of a rank the engine kept no activity for (run without keep_activity)");
  const RankActivity& a = out.activity[ri];
  Breakdown bd;
  bd.compute = to_seconds(a.compute);
  bd.optimizer = to_seconds(a.optimizer);
  bd.bubble = to_seconds(a.idle_scheduled);
  bd.other = to_seconds(a.idle_after + a.host);
  bd.host = to_seconds(a.host);
  bd.exposed_tp = to_seconds(a.exposed[kTP]);
  bd.exposed_cp = to_seconds(a.exposed[kCP]);
  bd.exposed_pp = to_seconds(a.exposed[kPP]);
  bd.exposed_dp = to_seconds(a.exposed[kDP]);
  bd.exposed_ep = to_seconds(a.exposed[kEP]);
  bd.exposed_other = to_seconds(a.exposed[kOther]);
  bd.exposed_comm = bd.exposed_tp + bd.exposed_cp + bd.exposed_pp + bd.exposed_ep + bd.exposed_dp + bd.exposed_other;
  return bd;
}

CriticalRank find_critical_rank(const Workload& wl, const SimulationOutput& out) {
  // The last rank to finish...
  std::size_t last = 0;
  SimTime last_end = -1;
  for (std::size_t r = 0; r < wl.ranks.size(); ++r) {
    SimTime e = 0;
    for (auto x : out.timelines[r].end) e = std::max(e, x);
    if (e > last_end) {
      last_end = e;
      last = r;
    }
  }
  // ...unless another rank idled less: in an unbalanced pipeline the bottleneck stage is the one
  // that is never waiting (the others show its work as bubble), and its breakdown says where the
  // time goes. Checked over the pipeline's ranks, not over thousands of --per-rank timelines.
  constexpr std::size_t kMaxRanksCompared = 128;
  if (wl.ranks.size() > kMaxRanksCompared) return {last, breakdown_of(out, last)};
  CriticalRank best{last, {}};
  double best_idle = std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < wl.ranks.size(); ++r) {
    Breakdown b = breakdown_of(out, r);
    const double idle = b.bubble + b.other + b.exposed_pp;  // waiting on other stages, however it shows
    if (idle < best_idle - 1e-12 || (std::abs(idle - best_idle) <= 1e-12 && r == last)) {
      best_idle = idle;
      best = {r, b};
    }
  }
  return best;
}

std::vector<CommStat> compute_comm_table(const Workload& wl, const SimulationOutput& out, std::size_t ri) {
  const RankProgram& p = wl.ranks[ri];
  const RankTimeline& t = out.timelines[ri];
  const auto busy = compute_intervals(p, t);
  std::vector<CoveredScan> covered_on(kNumStreams, CoveredScan(busy));  // a stream's calls start in time order
  struct Acc {
    CommStat stat;
    std::int64_t largest = -1;
  };
  std::map<std::pair<CollKind, GroupKind>, Acc> rows;  // named once per row; the rows are sorted below
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const Op& op = p.ops[i];
    if (op.type != Op::Type::Collective) continue;
    const auto& cd = wl.collectives[op.desc];
    const auto& g = wl.groups[cd.group];
    auto& acc = rows[{cd.kind, g.kind}];
    auto& s = acc.stat;
    if (s.count == 0) {
      s.kind = to_string(cd.kind);
      s.group = to_string(g.kind);
    }
    s.group_size = std::max(s.group_size, static_cast<int>(g.ranks.size()));
    s.count += 1;
    s.bytes += static_cast<double>(cd.bytes);
    const SimTime dur = t.end[i] - t.start[i];
    s.time_s += to_seconds(dur);
    s.max_call_s = std::max(s.max_call_s, to_seconds(dur));
    s.exposed_s += to_seconds(dur - covered_on[static_cast<std::size_t>(op.stream)](t.start[i], t.end[i]));
    if (cd.bytes > acc.largest) {
      acc.largest = cd.bytes;
      const auto& est = out.collective_estimates[op.desc];
      s.algorithm = to_string(est.algorithm);
      s.protocol = to_string(est.protocol);
    }
  }
  std::vector<CommStat> v;
  for (auto& [k, acc] : rows) v.push_back(acc.stat);
  std::sort(v.begin(), v.end(), [](const CommStat& a, const CommStat& b) {
    return a.time_s != b.time_s ? a.time_s > b.time_s : std::tie(a.kind, a.group) < std::tie(b.kind, b.group);
  });
  return v;
}

}  // namespace trainsim
