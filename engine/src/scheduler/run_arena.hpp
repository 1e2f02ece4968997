#pragma once
// The oneTBB arena a run executes in, with the thread count the caller asked for (0: all
// cores). More threads than cores are allowed rather than capped: oneTBB would otherwise run
// fewer and print a warning on stderr. The run's function executes on the calling thread, and
// only loops that split enter the arena, initializing it the first time (PendingArena,
// parallel_for.hpp). Results never depend on the count (parallel_for.hpp).
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <cstddef>
#include <functional>
#include <optional>

#include "parallel_for.hpp"
#include "thread_pinning.hpp"

namespace kingman::detail {

class RunArena final : public PendingArena {
 public:
  // pin_threads: each thread of the run on a CPU of its own while it works in the run; without,
  // workers are only kept off the calling thread's CPU as they enter (thread_pinning.hpp).
  explicit RunArena(int requested, bool pin_threads = false)
      : threads_(requested > 0 ? requested : tbb::this_task_arena::max_concurrency()),
        pin_threads_(pin_threads) {}

  int threads() const override { return threads_; }
  bool started() const override { return arena_.is_active(); }

  template <typename Function>
  void execute(const Function& function) {
    // Restored however the function leaves (it may throw).
    struct Restore {
      PendingArena* before = pending_arena;
      ~Restore() { pending_arena = before; }
    } restore;
    pending_arena = this;
    function();
  }

  void enter(const std::function<void()>& loop) override {
    if (!arena_.is_active()) {
      if (threads_ > tbb::this_task_arena::max_concurrency()) {
        allowance_.emplace(tbb::global_control::max_allowed_parallelism,
                           static_cast<std::size_t>(threads_));
      }
      arena_.initialize(threads_);
      if (pin_threads_) {
        pinning_.emplace(arena_);
      } else {
        spreading_.emplace(arena_);
      }
    } else if (spreading_) {
      spreading_->caller_entered();
    }
    arena_.execute(loop);
  }

 private:
  int threads_;
  bool pin_threads_;
  std::optional<tbb::global_control> allowance_;  // set before the arena starts its workers
  tbb::task_arena arena_;
  // Observers of arena_, declared after it so that they stop observing before it goes.
  std::optional<ThreadPinning> pinning_;
  std::optional<SpreadOnEntry> spreading_;
};

}  // namespace kingman::detail
