#include "explore/parallel_eval.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <numeric>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim::explore {

// The public API's name for it (trainsim/explore.hpp): the CLI and the Python module see no core/ header.
int resolve_threads(int requested) { return resolve_thread_count(requested); }

std::vector<PointOutcome> evaluate_points(const ScenarioSource& scenario, const std::vector<Overrides>& points,
                                          const std::vector<std::size_t>& indices, int threads,
                                          const PointOptions& options, const ProgressFn& progress,
                                          const OutcomeFn& on_outcome) {
  // Checked here, not in the workers: an exception escaping a std::jthread terminates the process.
  for (std::size_t i : indices)
    if (i >= points.size()) throw Error(fmt::format("point index {} is out of range ({} points)", i, points.size()));
  if (!options.give_up_above_s.empty() && options.give_up_above_s.size() != points.size())
    throw Error(fmt::format("{} limits for {} points", options.give_up_above_s.size(), points.size()));
  std::vector<PointOutcome> out(indices.size());
  if (indices.empty()) return out;
  // Workers take the next unclaimed slot; each writes only its own slot, so the result order is the
  // order of `indices` regardless of scheduling.
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;
  std::mutex progress_mutex;
  auto worker = [&] {
    PreparedJobCache reuse;  // this worker's last job, for its next point
    for (std::size_t j = next.fetch_add(1); j < indices.size(); j = next.fetch_add(1)) {
      const double limit = options.give_up_above_s.empty() ? std::numeric_limits<double>::infinity()
                                                           : options.give_up_above_s[indices[j]];
      out[j] = evaluate_point(scenario, points[indices[j]], options, limit, &reuse);
      if (progress || on_outcome) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        if (on_outcome) on_outcome(indices[j], out[j]);
        ++done;
        if (progress) progress(done, indices.size());
      }
    }
  };
  const int n = std::min<int>(resolve_thread_count(threads), static_cast<int>(indices.size()));
  if (n <= 1) {
    worker();
    return out;
  }
  std::vector<std::jthread> pool;
  pool.reserve(static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t) pool.emplace_back(worker);
  pool.clear();  // joins
  return out;
}

std::vector<PointOutcome> evaluate_all(const ScenarioSource& scenario, const std::vector<Overrides>& points,
                                       int threads, const PointOptions& options, const ProgressFn& progress) {
  std::vector<std::size_t> all(points.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  return evaluate_points(scenario, points, all, threads, options, progress);
}

}  // namespace trainsim::explore
