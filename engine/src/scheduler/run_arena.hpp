#pragma once
// The oneTBB arena a run executes in, with the thread count the caller asked for (0: all
// cores). More threads than cores are allowed rather than capped: oneTBB would otherwise run
// fewer and print a warning on stderr. The run's function executes on the calling thread, and
// only loops that split enter the arena, initializing it the first time (PendingArena,
// parallel_for.hpp). Results never depend on the count (parallel_for.hpp).
//
// The first loop waits, up to kWorkerWait, until a worker has entered the arena, yielding its
// CPU meanwhile (await_worker). An operating system may start a new thread on the CPU of the
// thread that created it, behind that thread: the 2-vCPU guests this project is measured on do
// so on purpose (`sched_vcpu_pack`), and oneTBB's first worker then sat behind the busy calling
// thread for its whole time slice. MPost2 at (64, 64, 100) ran its first 9-12 steps, 2.5-3 ms,
// on one thread in every fresh 2-thread process. Yielding lets the worker run at once, and
// entering the arena moves it to another CPU (SpreadOnEntry, thread_pinning.hpp): the first
// step is then split too, and the whole process took 9.2-9.9 ms instead of 10.4-10.9 ms
// (bench/RESULTS.md, Engine: SMC, thirty-first session). The wait happens once per run, and
// only in runs that split a loop.
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <thread>

#include "parallel_for.hpp"
#include "thread_pinning.hpp"

namespace kingman::detail {

class RunArena final : public PendingArena {
 public:
  // pin_threads: each thread of the run on a CPU of its own while it works in the run; without,
  // workers are only kept off the calling thread's CPU as they enter (thread_pinning.hpp).
  //
  // worker_wait: how long the first loop waits for a worker (see above); tests lengthen it.
  static constexpr std::chrono::microseconds kWorkerWait{1000};
  explicit RunArena(int requested, bool pin_threads = false,
                    std::chrono::microseconds worker_wait = kWorkerWait)
      : threads_(requested > 0 ? requested : tbb::this_task_arena::max_concurrency()),
        pin_threads_(pin_threads),
        worker_wait_(worker_wait) {}

  int threads() const override { return threads_; }
  bool started() const override { return arena_.is_active(); }
  // Whether a worker had entered the arena when its first loop began (await_worker).
  bool worker_awaited() const { return worker_awaited_; }

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
      // (No worker can come where the process allows one thread: a tbb::global_control of the
      // caller's.)
      if (threads_ > 1 &&
          tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism) > 1)
        await_worker();
    } else if (spreading_) {
      spreading_->caller_entered();
    }
    arena_.execute(loop);
  }

 private:
  // Enqueues a marker task, which only a worker can run while this thread stays out of the
  // arena, and yields this thread's CPU until a marker has run or worker_wait_ has passed. The
  // marker captures nothing and counts itself in a process-wide atomic: it may run after the
  // wait gave up, and a thread sanitizer sees no data handed to it inside libtbb. (Where runs
  // start at once on several threads, another run's marker may end this wait: it is only a
  // head start.)
  void await_worker() {
    static std::atomic<std::uint64_t> markers_run{0};
    const std::uint64_t before = markers_run.load(std::memory_order_acquire);
    arena_.enqueue([] { markers_run.fetch_add(1, std::memory_order_release); });
    const auto give_up = std::chrono::steady_clock::now() + worker_wait_;
    while (markers_run.load(std::memory_order_acquire) == before &&
           std::chrono::steady_clock::now() < give_up)
      std::this_thread::yield();
    worker_awaited_ = markers_run.load(std::memory_order_acquire) != before;
  }

  int threads_;
  bool pin_threads_;
  std::chrono::microseconds worker_wait_;
  bool worker_awaited_ = false;
  std::optional<tbb::global_control> allowance_;  // set before the arena starts its workers
  tbb::task_arena arena_;
  // Observers of arena_, declared after it so that they stop observing before it goes.
  std::optional<ThreadPinning> pinning_;
  std::optional<SpreadOnEntry> spreading_;
};

}  // namespace kingman::detail
