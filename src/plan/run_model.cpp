#include "plan/run_model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>

#include <fmt/format.h>

#include "core/error.hpp"

namespace trainsim::plan {

namespace {

double hardware_rate(const RunModelInputs& in) {
  double rate = 0;
  for (const auto& [cause, r] : in.failure_rate_per_s)
    if (const auto it = in.needs_node.find(cause); it != in.needs_node.end() && it->second) rate += r;
  return rate / (1 - in.recurrence);
}

double work_s(const RunModelInputs& in) { return in.useful_s + in.straggler_s; }

// The work a failure throws away, on average, with a checkpoint every `interval_s` of training: the failure falls
// uniformly in a cycle of interval + stall that starts when the previous checkpoint became durable, and everything
// since that checkpoint's stall ended is redone (an asynchronous write becomes durable write - stall later).
double lost_per_failure_s(const RunModelInputs& in, double interval_s) {
  const double stall = in.checkpoint_stall_s, write = std::max(in.checkpoint_write_s, stall);
  return 0.5 * (interval_s + stall) + (write - stall);
}

// Raw 64-bit draws turned into numbers the same way on every platform (std::*_distribution are not specified
// bit for bit).
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : state_(seed ^ 0x9e3779b97f4a7c15ull) {}
  double uniform() {  // [0, 1)
    return static_cast<double>(next() >> 11) * 0x1.0p-53;
  }
  double exponential(double rate) { return -std::log1p(-uniform()) / rate; }

 private:
  std::uint64_t next() {  // splitmix64: small, fast, and every seed gives a full-period stream
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t state_;
};

}  // namespace

double total_failure_rate(const RunModelInputs& in) {
  double rate = 0;
  for (const auto& [cause, r] : in.failure_rate_per_s)
    if (const auto it = in.needs_node.find(cause); it == in.needs_node.end() || !it->second) rate += r;
  return rate + hardware_rate(in);
}

double expected_spare_wait_s(const RunModelInputs& in) {
  if (!in.spare_nodes) return 0;
  const int spares = *in.spare_nodes;
  // Nodes in repair at a random moment: Poisson with mean rate x repair time (an M/G/infinity queue). A failure
  // waits when all spares are out, for the first of spares + 1 repairs under way.
  const double mean = hardware_rate(in) * in.repair_s;
  double below = 0, term = std::exp(-mean);
  for (int k = 0; k < spares; ++k) {
    below += term;
    term *= mean / (k + 1);
  }
  return std::max(0.0, 1 - below) * in.repair_s / (spares + 1);
}

double young_interval_s(const RunModelInputs& in) {
  const double rate = total_failure_rate(in);
  if (!(rate > 0) || !(in.checkpoint_stall_s > 0)) return work_s(in);
  return std::sqrt(2 * in.checkpoint_stall_s / rate);
}

double daly_interval_s(const RunModelInputs& in) {
  const double rate = total_failure_rate(in), stall = in.checkpoint_stall_s;
  if (!(rate > 0) || !(stall > 0)) return work_s(in);
  const double mtbf = 1 / rate;
  return stall < 2 * mtbf ? std::sqrt(2 * stall * mtbf) - stall : mtbf;  // Daly 2006, first order in stall/MTBF
}

RunExpectation expect_run(const RunModelInputs& in, double interval_s) {
  RunExpectation e;
  const double work = work_s(in), rate = total_failure_rate(in), hw = hardware_rate(in);
  const double per_failure = in.restart_s + (in.checkpoints ? in.load_s : 0);
  e.straggler_s = in.straggler_s;
  if (!in.checkpoints) {
    // Every failure starts the run again: the expected running time to finish work w without a failure is
    // (e^(rate w) - 1) / rate, with e^(rate w) - 1 failures on the way.
    e.interval_s = work;
    e.failures = rate > 0 ? std::expm1(rate * work) : 0;
    if (!std::isfinite(e.failures))
      throw Error(
          fmt::format("without checkpoints a run of {:.3g} days at {:.3g} failures a day never finishes: "
                      "set training.resilience.checkpoint_interval_min",
                      work / 86400, rate * 86400));
    e.running_s = rate > 0 ? e.failures / rate : work;
    e.lost_work_s = e.running_s - work;
  } else {
    e.interval_s = interval_s;
    e.checkpoint_stall_s = std::max(0.0, std::ceil(work / interval_s - 1e-9) - 1) * in.checkpoint_stall_s;
    const double lost = lost_per_failure_s(in, interval_s);
    if (rate * lost >= 1)
      throw Error(
          fmt::format("failures every {:.3g} h on average throw away {:.3g} h of work each: the run never "
                      "finishes; checkpoint more often or lower the failure rates",
                      1 / rate / 3600, lost / 3600));
    e.running_s = (work + e.checkpoint_stall_s) / (1 - rate * lost);
    e.failures = rate * e.running_s;
    e.lost_work_s = e.failures * lost;
  }
  e.restart_s = e.failures * per_failure;
  e.spare_wait_s = hw * e.running_s * expected_spare_wait_s(in);
  e.wall_s = e.running_s + e.restart_s + e.spare_wait_s;
  e.goodput = e.wall_s > 0 ? in.useful_s / e.wall_s : 1;
  return e;
}

double optimal_interval_s(const RunModelInputs& in) {
  const double work = work_s(in);
  const double lo = std::max({1.0, in.checkpoint_write_s - in.checkpoint_stall_s, 1e-6 * work});
  const double hi = std::max(lo, work);
  const auto wall = [&](double log_interval) {
    try {
      return expect_run(in, std::exp(log_interval)).wall_s;
    } catch (const Error&) { return std::numeric_limits<double>::infinity(); }
  };
  // Golden-section search on log(interval): the wall time is convex in it near the optimum (stalls fall as 1/t,
  // lost work grows as t).
  double a = std::log(lo), b = std::log(hi);
  const double g = (std::sqrt(5.0) - 1) / 2;
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = wall(c), fd = wall(d);
  for (int i = 0; i < 200 && b - a > 1e-9; ++i) {
    if (fc <= fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = wall(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = wall(d);
    }
  }
  return std::exp(0.5 * (a + b));
}

double RunTrials::percentile(double p) const {
  if (wall_s.empty()) return 0;
  const double at = std::clamp(p, 0.0, 1.0) * static_cast<double>(wall_s.size() - 1);
  const auto i = static_cast<std::size_t>(at);
  if (i + 1 >= wall_s.size()) return wall_s.back();
  return wall_s[i] + (at - static_cast<double>(i)) * (wall_s[i + 1] - wall_s[i]);
}

RunTrials simulate_runs(const RunModelInputs& in, double interval_s, int trials, std::uint64_t seed) {
  RunTrials out;
  const double work = work_s(in), rate = total_failure_rate(in), hw = hardware_rate(in);
  const double stall = in.checkpoint_stall_s, write = std::max(in.checkpoint_write_s, stall);
  constexpr double kEndTolerance = 1e-9;  // seconds of work: the last segment ends the run
  // A run that would draw without end (the analytic model refuses it) is cut off here with an error.
  constexpr std::int64_t kMaxFailuresPerTrial = 10'000'000;
  for (int trial = 0; trial < trials; ++trial) {
    Draws draws(seed + 0x632be59bd9b4e019ull * static_cast<std::uint64_t>(trial + 1));
    double t = 0, progress = 0, durable = 0, lost = 0, waited = 0;
    std::int64_t failures = 0;
    std::vector<std::pair<double, double>> pending;  // (durable at, progress): asynchronous writes under way
    int free_spares = in.spare_nodes.value_or(0);
    std::priority_queue<double, std::vector<double>, std::greater<>> repairs;  // when each node comes back
    double next_failure = rate > 0 ? draws.exponential(rate) : std::numeric_limits<double>::infinity();
    const double cycle = interval_s + stall;
    while (progress < work - kEndTolerance) {
      // Many whole cycles of training and checkpoint before the next failure and the run's last segment: taken at
      // once, so that a trial costs its failures, not its checkpoints. Every checkpoint but the newest is durable
      // by the end (an asynchronous write ends within an interval: interval >= write - stall).
      if (in.checkpoints) {
        const double before_last = std::ceil((work - kEndTolerance - progress) / interval_s) - 1;
        const double fit = std::isfinite(next_failure) ? std::floor((next_failure - t) / cycle) : before_last;
        const double m = std::min(fit, before_last);
        if (m >= 2) {
          for (const auto& p : pending) durable = std::max(durable, p.second);
          pending.clear();
          durable = std::max(durable, progress + (m - 1) * interval_s);
          t += m * cycle;
          progress += m * interval_s;
          if (write > stall)
            pending.emplace_back(t + (write - stall), progress);
          else
            durable = progress;
          continue;
        }
      }
      const double segment = in.checkpoints ? std::min(interval_s, work - progress) : work - progress;
      const bool last = progress + segment >= work - kEndTolerance;
      const double length = segment + (last || !in.checkpoints ? 0 : stall);
      if (next_failure >= t + length) {
        t += length;
        progress += segment;
        if (!last && in.checkpoints) pending.emplace_back(t + (write - stall), progress);
        std::erase_if(pending, [&](const auto& p) {
          if (p.first > t) return false;
          durable = std::max(durable, p.second);
          return true;
        });
        continue;
      }
      // A failure: back to the last checkpoint that was durable when it struck.
      const double into = std::min(next_failure - t, segment);  // training done in this segment before it
      t = next_failure;
      for (const auto& p : pending)
        if (p.first <= t) durable = std::max(durable, p.second);
      pending.clear();
      lost += progress + into - durable;
      progress = durable;
      if (++failures > kMaxFailuresPerTrial)
        throw Error("the simulated run does not finish: failures come faster than it recovers");
      t += in.restart_s + (in.checkpoints && durable > 0 ? in.load_s : 0);
      if (draws.uniform() * rate < hw) {  // a hardware failure: a node out for repair
        while (!repairs.empty() && repairs.top() <= t) {
          ++free_spares;
          repairs.pop();
        }
        repairs.push(t + in.repair_s);
        if (in.spare_nodes) {
          if (free_spares > 0) {
            --free_spares;
          } else {
            waited += repairs.top() - t;
            t = repairs.top();
            repairs.pop();
          }
        }
      }
      next_failure = t + draws.exponential(rate);
    }
    out.wall_s.push_back(t);
    out.mean_wall_s += t;
    out.mean_failures += static_cast<double>(failures);
    out.mean_lost_work_s += lost;
    out.mean_spare_wait_s += waited;
  }
  if (trials > 0) {
    const double n = trials;
    out.mean_wall_s /= n;
    out.mean_failures /= n;
    out.mean_lost_work_s /= n;
    out.mean_spare_wait_s /= n;
  }
  std::sort(out.wall_s.begin(), out.wall_s.end());
  return out;
}

}  // namespace trainsim::plan
