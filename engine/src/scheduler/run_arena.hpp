#pragma once
// The oneTBB arena a run executes in, with the thread count the caller asked for (0: all
// cores). More threads than cores are allowed rather than capped: oneTBB would otherwise run
// fewer and print a warning on stderr. One thread runs on the calling thread with every loop
// inline (run_inline, parallel_for.hpp), without starting oneTBB. Results never depend on the
// count (parallel_for.hpp).
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <cstddef>
#include <optional>

#include "parallel_for.hpp"

namespace kingman::detail {

class RunArena {
 public:
  explicit RunArena(int requested)
      : threads_(requested > 0 ? requested : tbb::this_task_arena::max_concurrency()) {
    if (threads_ == 1) return;
    if (threads_ > tbb::this_task_arena::max_concurrency()) {
      allowance_.emplace(tbb::global_control::max_allowed_parallelism,
                         static_cast<std::size_t>(threads_));
    }
    arena_.initialize(threads_);
  }

  int threads() const { return threads_; }

  template <typename Function>
  void execute(const Function& function) {
    if (threads_ != 1) {
      arena_.execute(function);
      return;
    }
    // Restored however the function leaves (it may throw).
    struct Inline {
      bool before = run_inline;
      Inline() { run_inline = true; }
      ~Inline() { run_inline = before; }
    } scope;
    function();
  }

 private:
  int threads_;
  std::optional<tbb::global_control> allowance_;  // set before the arena starts its workers
  tbb::task_arena arena_;
};

}  // namespace kingman::detail
