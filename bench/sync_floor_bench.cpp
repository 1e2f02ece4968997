// What a fork and join per step costs in CPU time on this host, whatever the engine does: the
// floor under the extra CPU time of an SMC run on 2 threads (bench/RESULTS.md, Threads).
//
// Each repetition is one "step": two tasks of kTaskMicros busy work each, one per thread, then
// a serial stretch of gap_us on the calling thread alone (an SMC step's weights, resampling and
// grouping), then the next step. Without waiting costs a repetition would take 2 kTaskMicros +
// gap_us of CPU time; the counter extra_cpu_us is what it took beyond that, per repetition, and
// wall_us its wall time.
//   BM_TbbStepGap    the tasks run by tbb::parallel_for in a 2-thread arena: oneTBB's worker
//                    spins (and yields) for a while when it runs out of tasks before it sleeps.
//   BM_SleepingHelper a helper thread that sleeps on a futex as soon as its task is done and is
//                    woken for the next one: no spinning, a sleep and a wake-up per step.
//   BM_SpinningHelper a helper thread that spins between its tasks and never sleeps: the
//                    waiting costs exactly the gap, with no sleep, wake-up or yield.
//   BM_LineTransfer  not a step: two threads hand one cache line back and forth, and the counter
//                    transfer_ns is the one-way time. It tells where the host has put the two
//                    vCPUs: on a 2-vCPU guest here it is either ~25-70 ns or ~160-200 ns for
//                    minutes at a time, and with the latter an MPost2 run's own tasks take ~16 %
//                    longer on 2 threads than on 1 (bench/RESULTS.md, Engine: SMC, twenty-ninth
//                    session).
// So extra_cpu_us at a given gap is what either waiting policy costs per step: oneTBB's is about
// the gap itself up to its spinning time, the sleeping helper's is the cost of one sleep and
// wake-up on this kernel and hypervisor. The smaller of the two, times the steps, bounds what
// any per-step synchronization costs an SMC run.
#include <benchmark/benchmark.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

namespace {

constexpr double kTaskMicros = 50.0;
constexpr int kStepsPerIteration = 200;

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Busy work on the calling thread for `micros` of wall time (reading the clock, which is work
// the scheduler cannot tell from arithmetic).
void busy_for(double micros) {
  const double end = now_seconds() + 1e-6 * micros;
  while (now_seconds() < end) {
  }
}

// Runs `steps` (which runs kStepsPerIteration steps) once per benchmark iteration and reports
// the per-step extra CPU time and wall time against the busy work alone.
template <typename Steps>
void measure(benchmark::State& state, double gap, const Steps& steps) {
  steps();  // warm: threads started
  double extra = 0.0, wall = 0.0;
  for (auto _ : state) {
    const double cpu0 = process_cpu_seconds(), wall0 = now_seconds();
    steps();
    const double cpu = process_cpu_seconds() - cpu0, elapsed = now_seconds() - wall0;
    extra += cpu / kStepsPerIteration * 1e6 - (2.0 * kTaskMicros + gap);
    wall += elapsed / kStepsPerIteration * 1e6;
  }
  const auto iterations = static_cast<double>(state.iterations());
  state.counters["extra_cpu_us"] = extra / iterations;
  state.counters["wall_us"] = wall / iterations;
}

void BM_TbbStepGap(benchmark::State& state) {
  const auto gap = static_cast<double>(state.range(0));
  tbb::task_arena arena(2);
  measure(state, gap, [&] {
    arena.execute([&] {
      for (int step = 0; step < kStepsPerIteration; ++step) {
        tbb::parallel_for(
            0, 2, [](int) { busy_for(kTaskMicros); }, tbb::simple_partitioner());
        busy_for(gap);
      }
    });
  });
}

long futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value) {
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op, value, nullptr, nullptr,
                 0);
}

// One helper that runs one task per step and sleeps on a futex as soon as it has none.
class SleepingHelper {
 public:
  SleepingHelper() : thread_([this] { serve(); }) {}
  ~SleepingHelper() {
    stop_.store(true, std::memory_order_relaxed);
    start_next();
    thread_.join();
  }

  void step() {
    done_.store(0, std::memory_order_relaxed);
    start_next();
    busy_for(kTaskMicros);
    // The join: the caller waits for the helper's task (spinning: it has nothing else to do).
    while (done_.load(std::memory_order_acquire) == 0) {
    }
  }

 private:
  void start_next() {
    epoch_.fetch_add(1, std::memory_order_release);
    futex(epoch_, FUTEX_WAKE_PRIVATE, 1);
  }

  void serve() {
    std::uint32_t seen = 0;
    while (true) {
      while (epoch_.load(std::memory_order_acquire) == seen)
        futex(epoch_, FUTEX_WAIT_PRIVATE, seen);
      seen = epoch_.load(std::memory_order_acquire);
      if (stop_.load(std::memory_order_relaxed)) return;
      busy_for(kTaskMicros);
      done_.store(1, std::memory_order_release);
    }
  }

  std::atomic<std::uint32_t> epoch_{0}, done_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

void BM_SleepingHelper(benchmark::State& state) {
  const auto gap = static_cast<double>(state.range(0));
  SleepingHelper helper;
  measure(state, gap, [&] {
    for (int step = 0; step < kStepsPerIteration; ++step) {
      helper.step();
      busy_for(gap);
    }
  });
}

// One helper that runs one task per step and spins (with the pause hint) between tasks, never
// sleeping: what a fork and join costs when the waiting thread burns exactly the serial gap.
class SpinningHelper {
 public:
  SpinningHelper() : thread_([this] { serve(); }) {}
  ~SpinningHelper() {
    stop_.store(true, std::memory_order_relaxed);
    epoch_.fetch_add(1, std::memory_order_release);
    thread_.join();
  }

  void step() {
    done_.store(0, std::memory_order_relaxed);
    epoch_.fetch_add(1, std::memory_order_release);
    busy_for(kTaskMicros);
    while (done_.load(std::memory_order_acquire) == 0) __builtin_ia32_pause();
  }

 private:
  void serve() {
    std::uint32_t seen = 0;
    while (true) {
      while (epoch_.load(std::memory_order_acquire) == seen) __builtin_ia32_pause();
      seen = epoch_.load(std::memory_order_acquire);
      if (stop_.load(std::memory_order_relaxed)) return;
      busy_for(kTaskMicros);
      done_.store(1, std::memory_order_release);
    }
  }

  alignas(64) std::atomic<std::uint32_t> epoch_{0};
  alignas(64) std::atomic<std::uint32_t> done_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

void BM_SpinningHelper(benchmark::State& state) {
  const auto gap = static_cast<double>(state.range(0));
  SpinningHelper helper;
  measure(state, gap, [&] {
    for (int step = 0; step < kStepsPerIteration; ++step) {
      helper.step();
      busy_for(gap);
    }
  });
}

void BM_LineTransfer(benchmark::State& state) {
  constexpr int kRounds = 100000;
  alignas(64) std::atomic<int> turn{0};
  double total = 0.0;
  for (auto _ : state) {
    turn.store(0);
    std::thread other([&] {
      for (int round = 0; round < kRounds; ++round) {
        while (turn.load(std::memory_order_acquire) != 2 * round + 1) {
        }
        turn.store(2 * round + 2, std::memory_order_release);
      }
    });
    const double start = now_seconds();
    for (int round = 0; round < kRounds; ++round) {
      turn.store(2 * round + 1, std::memory_order_release);
      while (turn.load(std::memory_order_acquire) != 2 * round + 2) {
      }
    }
    total += (now_seconds() - start) / (2.0 * kRounds) * 1e9;
    other.join();
  }
  state.counters["transfer_ns"] = total / static_cast<double>(state.iterations());
}

// Both waiting policies over the same serial gaps.
void gap_arguments(benchmark::internal::Benchmark* benchmark) {
  benchmark->ArgName("gap_us");
  for (const int gap : {5, 20, 50, 100, 200, 500}) benchmark->Arg(gap);
  benchmark->Iterations(5)->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

BENCHMARK(BM_LineTransfer)->Iterations(5)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TbbStepGap)->Apply(gap_arguments);
BENCHMARK(BM_SleepingHelper)->Apply(gap_arguments);
BENCHMARK(BM_SpinningHelper)->Apply(gap_arguments);
