// Where a run's threads run (engine/src/scheduler/thread_pinning.hpp and run_arena.hpp).
// --pin-threads: while a pinned run's loop runs, the calling thread and the worker each have a
// single CPU, not the same one; afterwards the caller has its own mask back, and a later run that
// does not pin releases the worker that the pinned run left pinned. Without it, a worker is moved
// off the caller's CPU but keeps its mask, and a run's first loop waits for a worker. (That
// neither changes a result is checked with the thread counts, in smc_test.cpp and
// cli_fit_test.cpp.)
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "../../engine/src/scheduler/run_arena.hpp"

#if defined(__linux__)
#include <sched.h>
#endif

namespace kingman::detail {
namespace {

#if defined(__linux__)

cpu_set_t this_thread_mask() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  EXPECT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  return mask;
}

// What each of the two threads of a loop saw of its own mask: the loop's two bodies wait for
// each other (up to a few seconds), so that both threads run one; `both` says whether they did.
struct TwoThreads {
  cpu_set_t caller{}, worker{};
  bool both = false;
};

TwoThreads masks_in_a_loop(RunArena& arena) {
  TwoThreads seen;
  arena.execute([&] {
    std::atomic<int> arrived{0};
    std::atomic<bool> worker_seen{false};
    parallel_for_range(
        0, 2,
        [&](const auto& range) {
          for (std::size_t i = range.begin(); i != range.end(); ++i) {
            const bool worker = tbb::this_task_arena::current_thread_index() > 0;
            (worker ? seen.worker : seen.caller) = this_thread_mask();
            if (worker) worker_seen = true;
            ++arrived;
            const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            while (arrived.load() < 2 && std::chrono::steady_clock::now() < give_up)
              std::this_thread::yield();
          }
        },
        1);
    seen.both = worker_seen.load();
  });
  return seen;
}

TEST(ThreadPinning, ARunPinsItsThreadsAndGivesTheCallerItsMaskBack) {
  const cpu_set_t before = this_thread_mask();
  if (CPU_COUNT(&before) < 2) GTEST_SKIP() << "a single CPU: nothing to pin apart";
  {
    RunArena pinned(2, /*pin_threads=*/true);
    const TwoThreads seen = masks_in_a_loop(pinned);
    EXPECT_EQ(CPU_COUNT(&seen.caller), 1);
    if (!seen.both) GTEST_SKIP() << "the worker did not join within 5 s";
    EXPECT_EQ(CPU_COUNT(&seen.worker), 1);
    cpu_set_t common;
    CPU_AND(&common, &seen.caller, &seen.worker);
    EXPECT_EQ(CPU_COUNT(&common), 0) << "the two threads were pinned to one CPU";
    // The caller stays pinned until the run ends.
    const cpu_set_t during = this_thread_mask();
    EXPECT_EQ(CPU_COUNT(&during), 1);
  }
  const cpu_set_t after = this_thread_mask();
  EXPECT_TRUE(CPU_EQUAL(&before, &after));

  // A run that does not pin: its threads have the whole mask, the worker included.
  RunArena free_run(2);
  const TwoThreads seen = masks_in_a_loop(free_run);
  EXPECT_TRUE(CPU_EQUAL(&seen.caller, &before));
  if (!seen.both) GTEST_SKIP() << "the worker did not join within 5 s";
  EXPECT_TRUE(CPU_EQUAL(&seen.worker, &before)) << CPU_COUNT(&seen.worker) << " CPUs";
}

// A run that does not pin moves a worker off its caller's CPU (SpreadOnEntry) through move_off:
// the thread leaves that CPU, and keeps its mask.
TEST(ThreadPinning, MovingOffACpuLeavesTheThreadItsMask) {
  const cpu_set_t before = this_thread_mask();
  if (CPU_COUNT(&before) < 2) GTEST_SKIP() << "a single CPU: nowhere to move to";
  // Not on that CPU (or no CPU): nothing to do.
  EXPECT_FALSE(pinning_detail::move_off(-1));
  // The scheduler may bring the thread straight back (a CPU left idle pulls waiting threads),
  // so a few tries: at least one must find it elsewhere right after.
  int moved_away = 0;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const int here = sched_getcpu();
    ASSERT_GE(here, 0);
    EXPECT_TRUE(pinning_detail::move_off(here));
    if (sched_getcpu() != here) ++moved_away;
    const cpu_set_t after = this_thread_mask();
    EXPECT_TRUE(CPU_EQUAL(&before, &after)) << CPU_COUNT(&after) << " CPUs";
  }
  EXPECT_GE(moved_away, 1);
}

#endif

// A run's first loop waits for a worker to enter its arena, yielding its CPU meanwhile
// (run_arena.hpp): given long enough, the worker is there when the loop begins. A run on one
// thread never starts the arena, so it waits for nothing.
TEST(RunArena, TheFirstLoopWaitsForAWorker) {
  RunArena one(1);
  one.execute([] {
    parallel_for_range(
        0, 2, [](const auto&) {}, 1);
  });
  EXPECT_FALSE(one.started());
  EXPECT_FALSE(one.worker_awaited());

  RunArena two(2, /*pin_threads=*/false, std::chrono::seconds(10));
  EXPECT_FALSE(two.worker_awaited());
  std::atomic<int> visited{0};
  two.execute([&] {
    parallel_for_range(
        0, 2, [&](const auto& range) { visited += static_cast<int>(range.size()); }, 1);
  });
  EXPECT_EQ(visited.load(), 2);
  EXPECT_TRUE(two.worker_awaited());
}

// Where the process allows a single thread (a caller's tbb::global_control), no worker can
// come, and the first loop does not wait for one.
TEST(RunArena, TheFirstLoopDoesNotWaitWhereNoWorkerMayRun) {
  const tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
  RunArena two(2, /*pin_threads=*/false, std::chrono::seconds(10));
  std::atomic<int> visited{0};
  const auto start = std::chrono::steady_clock::now();
  two.execute([&] {
    parallel_for_range(
        0, 2, [&](const auto& range) { visited += static_cast<int>(range.size()); }, 1);
  });
  EXPECT_EQ(visited.load(), 2);
  EXPECT_FALSE(two.worker_awaited());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace kingman::detail
