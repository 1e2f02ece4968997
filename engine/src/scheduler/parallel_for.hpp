#pragma once
// kingman's one entry point for data-parallel loops: body(range) for sub-ranges (a
// tbb::blocked_range<std::size_t>) of [begin, end) on the current oneTBB arena. Bodies must write
// disjoint outputs, so the split never changes a value; reductions happen afterwards, in index
// order.
//
// Cost-aware form: the caller states a rough cost of one index (work_per_item, in arithmetic
// operations). Handing work to another thread and joining it costs microseconds (waking a
// sleeping worker, which then spins before it sleeps again, all counted as CPU time); a loop run
// once per SMC step over cheap items would spend more on that than on its work. So a loop with
// less than kMinLoopWork in all runs inline on the calling thread without touching the
// scheduler. Larger loops are cut into about kTasksPerThread tasks per thread, so that the
// threads finish together (at a join, a thread whose last task ended early waits, and the wait
// is CPU time too), but no task gets less than kMinTaskWork, nor needs more than kMinLoopWork.
// Either way every index is visited exactly once, so the results do not depend on it.
//
// Under ThreadSanitizer the fork/join synchronization of the loop lives inside libtbb, which is
// not instrumented: the loop declares those edges itself (release before the fork, acquire in
// each task; release at each task's end, acquire after the join, both also when a task throws),
// so that TSan checks kingman's own accesses without false reports about data handed to the
// tasks. One more edge is out of reach: after a task's body, the worker counts the task down
// in oneTBB's wait objects, which sit on the calling thread's stack, below the loop's frame
// (header code, so TSan records those atomic read-modify-writes, and the release each makes),
// and the caller learns of it inside libtbb. Once the loop returns, that stack is dead, and the
// caller's next calls reuse it: TSan then saw a plain write of the caller race with the
// worker's old atomic one (a PriorPrior run, and the binary race's final trees about one run in
// eight: tests/tsan.supp names oneTBB's fold_tree, but TSan had lost the worker's stack and
// could not match it). So after the join the caller acquires at each address of the dead stack
// below it: where a worker released a wait object, that declares the edge the caller's wait
// took inside libtbb. (Telling TSan that the span is new memory, AnnotateNewMemory, does not
// work with GCC 12: its libtsan's AnnotateNewMemory is an empty function.)
#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#endif

namespace kingman::detail {

// A run's arena that the calling thread has not entered (run_arena.hpp). The run's function
// executes on the calling thread outside oneTBB, and only a loop that splits enters the arena,
// initializing it the first time. So a run with one thread, or whose loops are all small,
// never starts oneTBB, whose initialization (loading its allocator, probing the machine,
// starting workers) costs a process ~0.5 ms: 4 % of a 1-thread MPost2 run at n = 64, and as
// much again as a 2-thread PriorPrior run at n = 800 did in all.
class PendingArena {
 public:
  virtual int threads() const = 0;
  // Whether a loop has entered the arena, so that its workers exist.
  virtual bool started() const = 0;
  // Runs `loop` inside the arena.
  virtual void enter(const std::function<void()>& loop) = 0;

 protected:
  ~PendingArena() = default;
};

// The pending arena of the run this thread executes, if it has not entered it.
inline thread_local PendingArena* pending_arena = nullptr;

namespace scheduler_detail {

#if defined(__SANITIZE_THREAD__)
// The loop's call to oneTBB in a frame of its own, so that oneTBB's wait objects lie in that
// frame or below it, and are dead once it returns.
template <typename Range, typename Task>
[[gnu::noinline]] void tbb_parallel_for(const Range& range, const Task& task) {
  tbb::parallel_for(range, task);
}

// Called from the frame that called tbb_parallel_for, after it returned: this frame takes the
// place of that one, and what lay below is dead (a span far beyond oneTBB's frames). Acquires
// at every 4-byte-aligned address there (oneTBB's counters are 4 and 8 bytes): TSan returns at
// once where nothing was released, so the sweep costs ~8 000 lookups per loop.
inline constexpr std::uintptr_t kDeadStackBytes = std::uintptr_t{1} << 15;
inline constexpr std::uintptr_t kOwnFrameBytes = 64;

[[gnu::noinline]] inline void acquire_dead_stack() {
  volatile char here = 0;
  const std::uintptr_t top = reinterpret_cast<std::uintptr_t>(&here) & ~std::uintptr_t{3};
  for (std::uintptr_t address = top - kDeadStackBytes; address <= top + kOwnFrameBytes;
       address += 4)
    __tsan_acquire(reinterpret_cast<void*>(address));
}
#endif

// Runs `loop` (one that splits) inside the thread's pending arena, or where it is.
template <typename Loop>
void in_arena(const Loop& loop) {
  PendingArena* const arena = pending_arena;
  if (!arena) {
    loop();
    return;
  }
  // Inside, loops see the arena itself; restored however the loop leaves.
  struct Restore {
    PendingArena* arena;
    ~Restore() { pending_arena = arena; }
  } restore{arena};
  pending_arena = nullptr;
  arena->enter([&] { loop(); });
}

}  // namespace scheduler_detail

// Smallest loop (arithmetic operations: tens of microseconds here) worth running in parallel.
inline constexpr std::size_t kMinLoopWork = std::size_t{1} << 18;
// Smallest task (a few microseconds) worth handing to another thread.
inline constexpr std::size_t kMinTaskWork = std::size_t{1} << 14;
// Smallest loop worth starting a run's workers for when no other loop of the run will use
// them (LoopPlace::alone): starting them costs a process ~0.5 ms of CPU time, and the worker
// then spins before it sleeps. A PriorPrior run at n = 800 with 64 particles splits no step,
// and its trees alone (2.6 M here) made 2 threads cost 6-7 % more CPU time than 1, for no gain
// in wall time; Greedy-Rate1 at n = 500 splits only its initial scores (3.5 M), and 2 threads
// took 11 % more CPU and wall time; at n = 1 500 (31 M) still +4.7 % CPU time and no wall time
// gained, at 2 000 (56 M) +2.5 % and -2.9 % (bench/RESULTS.md, Threads, twenty-seventh
// session).
inline constexpr std::size_t kMinStartWork = std::size_t{1} << 25;
// Tasks per thread that a large loop is cut into, for balance. 32 rather than 8: at a join the
// thread that finished first spins for up to one task, and with 8 tasks per thread that wait
// cost MPost2 (n = 400, 64 particles, 2 threads) 2.5 % more CPU time and PriorPrior (n = 2400,
// 256 particles) 2.6 % more; the race and PostPost did not change (bench/RESULTS.md, Threads).
inline constexpr std::size_t kTasksPerThread = 32;

// Every index is its own potential task (for loops whose items are known to be large).
template <typename Body>
void parallel_for_range(std::size_t begin, std::size_t end, const Body& body,
                        std::size_t grain = 1) {
  if (end <= begin) return;
  if (pending_arena && pending_arena->threads() <= 1) {
    body(tbb::blocked_range<std::size_t>(begin, end, end - begin));
    return;
  }
  const tbb::blocked_range<std::size_t> all(begin, end, std::max<std::size_t>(grain, 1));
  scheduler_detail::in_arena([&] {
#if defined(__SANITIZE_THREAD__)
    // The edges hold when a body throws too: oneTBB then waits for the running tasks and
    // rethrows on this thread, which unwinds (freeing what the tasks read) after that join.
    struct Edge {
      void (*declare)(void*);
      char* token;
      ~Edge() { declare(token); }
    };
    char fork_token = 0, join_token = 0;
    __tsan_release(&fork_token);
    {
      const Edge join{__tsan_acquire, &join_token};
      scheduler_detail::tbb_parallel_for(all, [&](const auto& range) {
        __tsan_acquire(&fork_token);
        const Edge task_end{__tsan_release, &join_token};
        body(range);
      });
    }
    scheduler_detail::acquire_dead_stack();
#else
    tbb::parallel_for(all, body);
#endif
  });
}

// Threads that may run the bodies of a loop started here: the pending arena's, or the current
// arena's.
inline std::size_t loop_thread_count() {
  return static_cast<std::size_t>(pending_arena ? pending_arena->threads()
                                                : tbb::this_task_arena::max_concurrency());
}

// Threads the machine runs at once: its cores as oneTBB counts them (within the process's
// affinity mask). A run may ask for more threads; those beyond take turns.
inline std::size_t machine_thread_count() {
  return static_cast<std::size_t>(std::max(1, tbb::info::default_concurrency()));
}

// The calling thread's slot in [0, loop_thread_count()) while it runs a loop body: its index in
// the arena that runs the loop's tasks (distinct for the threads there), or 0 where the index
// is not one of the arena's (outside any arena, or another arena's thread: a loop that does not
// split runs on the calling thread alone, so any slot is private to it). Scratch kept per slot
// is then used by one thread at a time.
inline std::size_t current_thread_slot() {
  const int index = tbb::this_task_arena::current_thread_index();
  return index > 0 && static_cast<std::size_t>(index) < loop_thread_count()
             ? static_cast<std::size_t>(index)
             : 0;
}

// Tasks per thread for a loop whose items all cost the same (a row of pairs): balance needs
// few, and each task handed over costs the scheduler a microsecond or so. On Greedy-Rate1's new
// rows (4000 x 20, 10 % missing), 2 threads cost 16 % more CPU time than 1 with 32 tasks per
// thread and 8 % with 4, the matrix writes then still serial; with those in the pieces too,
// 3.2 % (bench/RESULTS.md, fourteenth session).
inline constexpr std::size_t kUniformTasksPerThread = 4;

// Whether other loops of the run may split after this one and share the cost of starting its
// workers (among_others, the default), or none will: the SMC particles' trees at a run's end,
// or Greedy-Rate1's initial scores where its merge rows are too short to split (alone).
enum class LoopPlace { among_others, alone };

// Inline on one thread or below kMinLoopWork in all (or, for a loop alone in a run that has not
// started its workers, below kMinStartWork); otherwise tasks as described at the top of this
// file (tasks_per_thread of them, kUniformTasksPerThread where items cost the same).
template <typename Body>
void parallel_for_work(std::size_t begin, std::size_t end, std::size_t work_per_item,
                       const Body& body, std::size_t tasks_per_thread = kTasksPerThread,
                       LoopPlace place = LoopPlace::among_others) {
  if (end <= begin) return;
  const std::size_t items = end - begin, work = std::max<std::size_t>(work_per_item, 1);
  const std::size_t threads = loop_thread_count();
  const bool starts_workers =
      place == LoopPlace::alone && pending_arena && !pending_arena->started();
  const std::size_t least_work = starts_workers ? kMinStartWork : kMinLoopWork;
  if (threads <= 1 || items <= std::max<std::size_t>(1, least_work / work)) {
    body(tbb::blocked_range<std::size_t>(begin, end, items));
    return;
  }
  const std::size_t balanced = items / (tasks_per_thread * std::max<std::size_t>(threads, 1));
  const std::size_t smallest = (kMinTaskWork + work - 1) / work;
  const std::size_t largest = std::max<std::size_t>(1, kMinLoopWork / work);
  parallel_for_range(begin, end, body, std::clamp(balanced, std::min(smallest, largest), largest));
}

}  // namespace kingman::detail
