#include "api/run_statistics.hpp"

#include "api/compute_intervals.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

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
  if (wl.ranks.size() > kMaxRanksCompared) return {last, compute_breakdown(wl, out, last, out.makespan)};
  CriticalRank best{last, {}};
  double best_idle = std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < wl.ranks.size(); ++r) {
    Breakdown b = compute_breakdown(wl, out, r, out.makespan);
    const double idle = b.bubble + b.other + b.exposed_pp;  // waiting on other stages, however it shows
    if (idle < best_idle - 1e-12 || (std::abs(idle - best_idle) <= 1e-12 && r == last)) {
      best_idle = idle;
      best = {r, b};
    }
  }
  return best;
}

Breakdown compute_breakdown(const Workload& wl, const SimulationOutput& out, std::size_t ri, SimTime iteration_end) {
  const RankProgram& p = wl.ranks[ri];
  const RankTimeline& t = out.timelines[ri];
  // Sweep over boundaries: +1/-1 per communicator category, and the compute op active.
  struct Point {  // 16 bytes: the sweep is bound by the memory it walks
    SimTime at;
    std::int8_t delta;
    std::int8_t cat;  // -1: compute (phase in `phase`)
    Phase phase;
  };
  // Each stream runs its ops one after another, so its boundaries come in time order: one sorted run per stream,
  // walked together (linear, where sorting all of them was most of this function's time). An op that starts as the
  // one before it on its stream ends, and counts the same, extends that one's interval: back-to-back kernels are
  // one interval, and the walk visits a fraction of the points.
  std::vector<Point> by_stream[kNumStreams];
  const auto add = [&](std::vector<Point>& run, SimTime from, SimTime to, std::int8_t cat, Phase phase) {
    const auto counts_as = [](Phase x) { return x == Phase::Optimizer; };  // all the sweep tells apart
    if (!run.empty() && run.back().at == from && run.back().cat == cat &&
        (cat != -1 || counts_as(run.back().phase) == counts_as(phase))) {
      run.back().at = to;
      return;
    }
    run.push_back({from, +1, cat, phase});
    run.push_back({to, -1, cat, phase});
  };
  {
    std::size_t ops_on[kNumStreams] = {};
    for (const Op& op : p.ops) ++ops_on[static_cast<int>(op.stream)];
    for (int k = 0; k < kNumStreams; ++k) by_stream[k].reserve(2 * ops_on[k]);
  }
  SimTime sched_end = 0;  // end of the rank's last forward/backward kernel
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const Op& op = p.ops[i];
    if (t.end[i] <= t.start[i]) continue;
    std::vector<Point>& run = by_stream[static_cast<int>(op.stream)];
    if (op.type == Op::Type::Compute) {
      add(run, t.start[i], t.end[i], -1, op.phase);
      if (op.phase == Phase::Forward || op.phase == Phase::Backward || op.phase == Phase::Recompute) {
        sched_end = std::max(sched_end, t.end[i]);
      }
    } else {
      add(run, t.start[i], t.end[i],
          static_cast<std::int8_t>(category_of(wl.groups[wl.collectives[op.desc].group].kind)), op.phase);
    }
  }
  // The compute stream idle until the host issues its next kernel (launch-bound): one run, in time order.
  constexpr std::int8_t kHostWait = -3;
  std::vector<Point> host_run;
  if (ri < out.host_waits.size())
    for (const auto& [from, to] : out.host_waits[ri]) {
      host_run.push_back({from, +1, kHostWait, Phase::Other});
      host_run.push_back({to, -1, kHostWait, Phase::Other});
    }
  const auto earlier = [](const Point& a, const Point& b) { return a.at < b.at; };
  std::vector<std::vector<Point>> runs;
  runs.push_back({{0, 0, -2, Phase::Other}, {iteration_end, 0, -2, Phase::Other}});
  if (iteration_end < 0) std::swap(runs[0][0], runs[0][1]);
  for (std::vector<Point>& run : by_stream)
    if (!run.empty()) runs.push_back(std::move(run));
  if (!host_run.empty()) runs.push_back(std::move(host_run));
  for (std::vector<Point>& run : runs)
    if (!std::is_sorted(run.begin(), run.end(), earlier)) std::stable_sort(run.begin(), run.end(), earlier);
  // The runs walked together, earliest point first and equal times in run order (what a stable merge of the runs
  // in order gives), without copying them into one list: merging them pairwise, level by level, wrote every point
  // log2(runs) times more, and the writes were what this function waited on (7% of a sweep point).
  constexpr std::size_t kMaxRuns = kNumStreams + 2;
  const std::size_t num_runs = runs.size();
  std::size_t next_of[kMaxRuns] = {};
  SimTime head[kMaxRuns];  // time of each run's next point; an exhausted run's never wins
  std::size_t left = 0;
  for (std::size_t r = 0; r < kMaxRuns; ++r) {
    head[r] = r < num_runs ? runs[r].front().at : std::numeric_limits<SimTime>::max();
    if (r < num_runs) left += runs[r].size();
  }
  const auto next_point = [&]() -> const Point* {
    if (left == 0) return nullptr;
    --left;
    std::size_t best = 0;
    for (std::size_t r = 1; r < num_runs; ++r)
      if (head[r] < head[best]) best = r;
    const Point* taken = &runs[best][next_of[best]++];
    head[best] = next_of[best] < runs[best].size() ? runs[best][next_of[best]].at : std::numeric_limits<SimTime>::max();
    return taken;
  };
  int active[kCategories] = {};
  int compute_active = 0, host_active = 0;
  Phase compute_phase = Phase::Other;
  // Sums in integer time, exact whichever way the intervals were cut; seconds at the end.
  SimTime acc_compute = 0, acc_opt = 0, acc_bubble = 0, acc_other = 0, acc_host = 0, acc_exposed[kCategories] = {};
  const Point* pt = next_point();
  for (const Point* following = pt != nullptr ? next_point() : nullptr; following != nullptr;
       pt = following, following = next_point()) {
    if (pt->cat == -1) {
      compute_active += pt->delta;
      if (pt->delta > 0) compute_phase = pt->phase;
    } else if (pt->cat >= 0) {
      active[pt->cat] += pt->delta;
    } else if (pt->cat == kHostWait) {
      host_active += pt->delta;
    }
    const SimTime a = std::max<SimTime>(pt->at, 0), b = std::min(following->at, iteration_end);
    if (b <= a) continue;
    const SimTime len = b - a;
    if (compute_active > 0) {
      (compute_phase == Phase::Optimizer ? acc_opt : acc_compute) += len;
      continue;
    }
    int cat = -1;
    for (int c : {kTP, kCP, kPP, kEP, kDP, kOther})
      if (active[c] > 0) {
        cat = c;
        break;
      }
    if (cat >= 0)
      acc_exposed[cat] += len;
    else if (host_active > 0)
      acc_host += len;
    else if (b <= sched_end)  // waiting for other stages, the pipeline fill included
      acc_bubble += len;
    else
      acc_other += len;
  }
  Breakdown bd;
  bd.compute = to_seconds(acc_compute);
  bd.optimizer = to_seconds(acc_opt);
  bd.bubble = to_seconds(acc_bubble);
  bd.other = to_seconds(acc_other + acc_host);
  bd.host = to_seconds(acc_host);
  bd.exposed_tp = to_seconds(acc_exposed[kTP]);
  bd.exposed_cp = to_seconds(acc_exposed[kCP]);
  bd.exposed_pp = to_seconds(acc_exposed[kPP]);
  bd.exposed_dp = to_seconds(acc_exposed[kDP]);
  bd.exposed_ep = to_seconds(acc_exposed[kEP]);
  bd.exposed_other = to_seconds(acc_exposed[kOther]);
  bd.exposed_comm = bd.exposed_tp + bd.exposed_cp + bd.exposed_pp + bd.exposed_ep + bd.exposed_dp + bd.exposed_other;
  return bd;
}

std::vector<CommStat> compute_comm_table(const Workload& wl, const SimulationOutput& out, std::size_t ri) {
  const RankProgram& p = wl.ranks[ri];
  const RankTimeline& t = out.timelines[ri];
  const auto busy = compute_intervals(p, t);
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
    s.exposed_s += to_seconds(dur - covered(busy, t.start[i], t.end[i]));
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
