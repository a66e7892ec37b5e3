#pragma once
// Independent tasks on a few threads, for the work a simulation prepares before its (sequential) event loop:
// task i writes only its own result slot, so the results do not depend on the thread count or on which thread ran
// which task. An exception from a task is rethrown after all have finished, the lowest task's first, so that the
// error a user sees is the same whatever the threads.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace trainsim {

// The threads `requested` asks for: itself when > 0, else the hardware's concurrency (at least 1).
inline int resolve_thread_count(int requested) {
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

// Calls task(i) for every i in [0, n) on up to `threads` threads (the calling thread is one of them).
template <class Task>
void run_in_parallel(std::size_t n, int threads, const Task& task) {
  const std::size_t workers = std::min(n, static_cast<std::size_t>(std::max(1, threads)));
  if (workers <= 1) {
    for (std::size_t i = 0; i < n; ++i) task(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(n);
  const auto work = [&] {
    for (std::size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      try {
        task(i);
      } catch (...) { errors[i] = std::current_exception(); }
    }
  };
  {
    std::vector<std::jthread> pool;
    pool.reserve(workers - 1);
    for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
  }  // joined
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace trainsim
