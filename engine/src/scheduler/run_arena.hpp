#pragma once
// The oneTBB arena a run executes in, with the thread count the caller asked for (0: all
// cores). More threads than cores are allowed rather than capped: oneTBB would otherwise run
// fewer and print a warning on stderr. Results never depend on the count (parallel_for.hpp).
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <cstddef>
#include <optional>

namespace kingman::detail {

class RunArena {
 public:
  explicit RunArena(int requested)
      : threads_(requested > 0 ? requested : tbb::this_task_arena::max_concurrency()) {
    if (threads_ > tbb::this_task_arena::max_concurrency()) {
      allowance_.emplace(tbb::global_control::max_allowed_parallelism,
                         static_cast<std::size_t>(threads_));
    }
    arena_.initialize(threads_);
  }

  int threads() const { return threads_; }

  template <typename Function>
  void execute(const Function& function) {
    arena_.execute(function);
  }

 private:
  int threads_;
  std::optional<tbb::global_control> allowance_;  // set before the arena starts its workers
  tbb::task_arena arena_;
};

}  // namespace kingman::detail
