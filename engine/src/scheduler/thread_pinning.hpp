#pragma once
// --pin-threads: a run's threads each on a CPU of its own, for as long as they work in the run.
//
// Why: an operating system may place a new thread on the CPU of the thread that started it and
// move it only later. The 2-vCPU Firecracker guests this project is measured on do that on
// purpose (their kernels run with `sched_vcpu_pack`): oneTBB's worker shared the main thread's
// vCPU for the first milliseconds of a run, and MPost2 at (n, d, N) = (64, 64, 100) took 8-9 ms
// in a fresh 2-thread process against 5.7 ms once both threads ran apart (bench/RESULTS.md,
// Engine: SMC, twenty-eighth and thirtieth sessions). Pinned, the worker starts on the other CPU.
//
// Why only on request: a pinned thread cannot be moved by the scheduler. Two pinned runs on one
// machine would both start from the CPUs their main threads are on and may share CPUs that other
// cores could have taken; and a library must not change its caller's thread for good. So this is
// for timing runs on a machine the run has to itself, as OpenMP's OMP_PROC_BIND is.
//
// What it does: the CPUs of the calling thread's affinity mask are listed with the CPU it runs on
// first. The calling thread (the arena's slot 0) is pinned to that CPU while the run lasts and
// gets its mask back afterwards. Each worker is pinned, when it enters the run's arena, to the CPU
// of its slot (wrapping around when there are more threads than CPUs), and gets the process's mask
// back when it leaves. oneTBB's workers serve every arena of the process, and one may still be in
// this arena when the run ends: a later run's arena releases such a worker when it enters
// (SpreadOnEntry). Pinning never changes a result, only where threads run.
//
// Without --pin-threads a run still keeps its workers off its calling thread's CPU, without
// pinning anything (SpreadOnEntry): a worker that enters the run's arena on the CPU the caller
// last ran a loop on is moved to another CPU of its own mask, which it gets back at once; the
// scheduler picks that CPU, and may move the worker again like any other thread. On the 2-vCPU
// host, with its vCPUs far apart, MPost2 at (64, 64, 100) then took 13.0 ms as a whole process
// on 2 threads, as pinned, against 14.1 ms without; a run's first loop also waits for its first
// worker (run_arena.hpp). (bench/RESULTS.md, Engine: SMC, thirty-first session.)
#include <tbb/task_arena.h>
#include <tbb/task_scheduler_observer.h>

#include <atomic>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace kingman::detail {

namespace pinning_detail {

// Whether this thread was pinned by a run (and not released since).
inline thread_local bool pinned = false;
// Whether any run of this process has pinned threads: later runs then release them on entry.
inline std::atomic<bool> any_run_pinned{false};

#if defined(__linux__)
// What a released worker gets back: the mask of the thread that started the process's first
// pinned run, read then (usually the process's own).
inline cpu_set_t& process_mask() {
  static cpu_set_t mask = [] {
    cpu_set_t m;
    CPU_ZERO(&m);
    if (sched_getaffinity(0, sizeof m, &m) != 0) {
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &m);
    }
    return m;
  }();
  return mask;
}

inline void pin_to(int cpu) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  CPU_SET(cpu, &mask);
  if (sched_setaffinity(0, sizeof mask, &mask) == 0) pinned = true;
}

inline void release() {
  if (!pinned) return;
  sched_setaffinity(0, sizeof(cpu_set_t), &process_mask());
  pinned = false;
}

// Moves the calling thread off `cpu` if it runs there and its mask has another CPU: its mask
// without `cpu` (the kernel migrates a thread off a CPU its new mask lacks before the call
// returns), then its mask back, which leaves it where it went. Whether it moved.
inline bool move_off(int cpu) {
  if (cpu < 0 || sched_getcpu() != cpu) return false;
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0 || !CPU_ISSET(cpu, &mask) ||
      CPU_COUNT(&mask) < 2)
    return false;
  cpu_set_t elsewhere = mask;
  CPU_CLR(cpu, &elsewhere);
  if (sched_setaffinity(0, sizeof elsewhere, &elsewhere) != 0) return false;
  sched_setaffinity(0, sizeof mask, &mask);
  return true;
}
#endif

// An observer's callback: gives a worker a run pinned its mask back (nothing for a run's
// calling thread, which its ThreadPinning restores, nor off Linux).
inline void release_worker(bool worker) {
#if defined(__linux__)
  if (worker) release();
#else
  (void)worker;
#endif
}

}  // namespace pinning_detail

// Pins the threads of `arena` while it lives (see the top of this file). Create it on the
// thread that runs the arena's work, after the arena is initialized.
class ThreadPinning final : public tbb::task_scheduler_observer {
 public:
  explicit ThreadPinning(tbb::task_arena& arena) : tbb::task_scheduler_observer(arena) {
#if defined(__linux__)
    pinning_detail::process_mask();  // read before any thread is pinned
    CPU_ZERO(&caller_mask_);
    if (sched_getaffinity(0, sizeof caller_mask_, &caller_mask_) != 0) return;
    const int current = sched_getcpu();
    if (current >= 0 && CPU_ISSET(current, &caller_mask_)) cpus_.push_back(current);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &caller_mask_) && cpu != current) cpus_.push_back(cpu);
    if (cpus_.empty()) return;
    pinning_detail::any_run_pinned.store(true, std::memory_order_relaxed);
    caller_was_pinned_ = pinning_detail::pinned;
    pinning_detail::pin_to(cpus_.front());
    // The workers read cpus_: published through an atomic, whose release and acquire a thread
    // sanitizer sees (the observer list's own synchronization lies inside libtbb).
    ready_.store(true, std::memory_order_release);
    observe(true);
#endif
  }

  ~ThreadPinning() override {
    // observe(false) returns once no callback runs any more (oneTBB's observer_proxy.cpp spins
    // until the observer's busy count is 0), but that wait lies inside libtbb: the acquire here
    // pairs with each callback's release of callbacks_done_, so that a thread sanitizer sees
    // their reads of cpus_ end before the vector is freed. (It reported a race without it.)
    observe(false);
    (void)callbacks_done_.load(std::memory_order_acquire);
#if defined(__linux__)
    if (!cpus_.empty()) {
      sched_setaffinity(0, sizeof caller_mask_, &caller_mask_);
      pinning_detail::pinned = caller_was_pinned_;
    }
#endif
  }

  ThreadPinning(const ThreadPinning&) = delete;
  ThreadPinning& operator=(const ThreadPinning&) = delete;

  void on_scheduler_entry(bool worker) override {
#if defined(__linux__)
    if (!worker || !ready_.load(std::memory_order_acquire)) return;
    const int slot = tbb::this_task_arena::current_thread_index();
    if (slot < 0) return;
    pinning_detail::pin_to(cpus_[static_cast<std::size_t>(slot) % cpus_.size()]);
    callbacks_done_.fetch_add(1, std::memory_order_release);
#else
    (void)worker;
#endif
  }

  void on_scheduler_exit(bool worker) override {
    pinning_detail::release_worker(worker);
  }

 private:
  std::vector<int> cpus_;                    // the caller's CPU, then the rest of its mask
  std::atomic<bool> ready_{false};           // cpus_ is complete
  std::atomic<unsigned> callbacks_done_{0};  // workers pinned (see the destructor)
#if defined(__linux__)
  cpu_set_t caller_mask_;
#endif
  bool caller_was_pinned_ = false;
};

// A run that does not pin (see the top of this file): moves a worker that enters `arena` on the
// CPU where the calling thread last entered it (caller_entered) to another CPU of the worker's
// mask, and releases workers that an earlier pinned run left pinned.
class SpreadOnEntry final : public tbb::task_scheduler_observer {
 public:
  explicit SpreadOnEntry(tbb::task_arena& arena) : tbb::task_scheduler_observer(arena) {
    caller_entered();
    observe(true);
  }
  ~SpreadOnEntry() override {
    // As in ~ThreadPinning: the callbacks' end, as a thread sanitizer can see it.
    observe(false);
    (void)callbacks_done_.load(std::memory_order_acquire);
  }
  SpreadOnEntry(const SpreadOnEntry&) = delete;
  SpreadOnEntry& operator=(const SpreadOnEntry&) = delete;

  // Called by the calling thread each time it enters the arena for a loop (and by the
  // constructor, before observing).
  void caller_entered() {
#if defined(__linux__)
    caller_cpu_.store(sched_getcpu(), std::memory_order_release);
#else
    caller_cpu_.store(-1, std::memory_order_release);
#endif
  }

  void on_scheduler_entry(bool worker) override {
    if (!worker) return;
    // Read first, with acquire: a callback only runs after the constructor's store, so this
    // orders the observer's construction before the callback's other accesses as a thread
    // sanitizer sees it (oneTBB's own ordering lies inside libtbb, where it cannot).
    const int caller_cpu = caller_cpu_.load(std::memory_order_acquire);
    pinning_detail::release_worker(worker);
#if defined(__linux__)
    pinning_detail::move_off(caller_cpu);
#else
    (void)caller_cpu;
#endif
    callbacks_done_.fetch_add(1, std::memory_order_release);
  }

 private:
  std::atomic<int> caller_cpu_{-1};
  std::atomic<unsigned> callbacks_done_{0};
};

}  // namespace kingman::detail
