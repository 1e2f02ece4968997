// What a second busy vCPU costs, taken apart: the extra CPU time of an SMC run on 2 threads,
// beside the extra that the same run pays on 1 thread when an independent twin runs at the same
// time, in another process (fork) or on another thread of this process. Every iteration runs the
// four cases back to back (the host's speed drifts by tens of percent within an hour, so only
// cases measured in the same iteration are compared), each timed by the CPU clocks of the
// threads or processes that did the work:
//   alone          the run on 1 thread, nothing else running
//   fork_twins     the run on 1 thread in this process and in a forked child, at once
//   thread_twins   two runs on 1 thread each, on two threads of this process, at once
//   two_threads    the run on 2 threads (the engine's own parallel loops)
// Counters: the alone run's CPU milliseconds; each other case's extra CPU time against the
// alone run of its iteration, in percent (per run); and beyond_twins_pct, the 2-thread run's
// extra less the thread twins' in the same iteration (in points): what the engine's own threads
// add to the cost of any two runs at once on this host. Medians over the iterations, since a
// neighbour's burst on the host can double one iteration's times.
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kingman/inference/smc.hpp"
#include "kingman/model/covariance.hpp"
#include "kingman/model/generate.hpp"

namespace {

double cpu_seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

kingman::WhitenedData model_data(std::size_t n, std::size_t d) {
  kingman::GenerateOptions options;
  options.n = n;
  options.d = d;
  options.seed = 11;
  return kingman::whiten(kingman::generate(options).data, kingman::Covariance::identity(d));
}

struct Case {
  kingman::Algorithm proposal;
  std::size_t particles;
};

double run(const kingman::WhitenedData& data, const Case& c, int threads) {
  kingman::SmcOptions options;
  options.proposal = c.proposal;
  options.particles = c.particles;
  options.threads = threads;
  return kingman::run_smc(data, 0.0, options).log_evidence;
}

// CPU seconds of one 1-thread run on this thread.
double alone(const kingman::WhitenedData& data, const Case& c) {
  const double start = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
  benchmark::DoNotOptimize(run(data, c, 1));
  return cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - start;
}

// Mean CPU seconds of the two runs: here and in a forked child, at once. The child only runs on
// one thread (no oneTBB), allocates and exits.
double fork_twins(const kingman::WhitenedData& data, const Case& c) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) throw std::runtime_error("concurrency_bench: pipe failed");
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("concurrency_bench: fork failed");
  if (child == 0) {
    const double seconds = alone(data, c);
    const bool written = write(pipe_ends[1], &seconds, sizeof seconds) == sizeof seconds;
    _exit(written ? 0 : 1);
  }
  const double own = alone(data, c);
  double childs = 0.0;
  const bool read_back = read(pipe_ends[0], &childs, sizeof childs) == sizeof childs;
  int status = 0;
  waitpid(child, &status, 0);
  close(pipe_ends[0]);
  close(pipe_ends[1]);
  if (!read_back || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("concurrency_bench: the forked twin failed");
  return 0.5 * (own + childs);
}

// Mean CPU seconds of two 1-thread runs on two threads of this process, at once (each on its
// own copy of the data).
double thread_twins(const kingman::WhitenedData& data, const kingman::WhitenedData& copy,
                    const Case& c) {
  double first = 0.0, second = 0.0;
  std::thread other([&] { second = alone(copy, c); });
  first = alone(data, c);
  other.join();
  return 0.5 * (first + second);
}

// CPU seconds of the whole process (both threads) for one 2-thread run.
double two_threads(const kingman::WhitenedData& data, const Case& c) {
  const double start = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
  benchmark::DoNotOptimize(run(data, c, 2));
  return cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - start;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t half = values.size() / 2;
  return values.size() % 2 == 1 ? values[half] : 0.5 * (values[half - 1] + values[half]);
}

void BM_TwoAtOnce(benchmark::State& state) {
  const Case c{static_cast<kingman::Algorithm>(state.range(0)),
               static_cast<std::size_t>(state.range(3))};
  state.SetLabel(kingman::to_string(c.proposal));
  const auto n = static_cast<std::size_t>(state.range(1));
  const auto d = static_cast<std::size_t>(state.range(2));
  const kingman::WhitenedData data = model_data(n, d), copy = model_data(n, d);
  alone(data, c);  // warm: the allocator's arenas and the first pages
  two_threads(data, c);
  std::vector<double> alone_ms, fork_pct, twins_pct, threads_pct, beyond_pct;
  for (auto _ : state) {
    const double base = alone(data, c);
    alone_ms.push_back(1e3 * base);
    fork_pct.push_back(100.0 * (fork_twins(data, c) / base - 1.0));
    twins_pct.push_back(100.0 * (thread_twins(data, copy, c) / base - 1.0));
    threads_pct.push_back(100.0 * (two_threads(data, c) / base - 1.0));
    beyond_pct.push_back(threads_pct.back() - twins_pct.back());
  }
  state.counters["alone_ms"] = median(alone_ms);
  state.counters["fork_twins_pct"] = median(fork_pct);
  state.counters["thread_twins_pct"] = median(twins_pct);
  state.counters["two_threads_pct"] = median(threads_pct);
  state.counters["beyond_twins_pct"] = median(beyond_pct);
}
// MPost2 at the thread sweep's size (bench/scaling_sweep.py --sweeps threads) and at Henao &
// Lucas's (64, 64, 100); the race at the sweep's n = 200.
BENCHMARK(BM_TwoAtOnce)
    ->ArgNames({"proposal", "n", "d", "N"})
    ->Args({static_cast<int>(kingman::Algorithm::mpost2), 400, 20, 64})
    ->Args({static_cast<int>(kingman::Algorithm::mpost2), 64, 64, 100})
    ->Args({static_cast<int>(kingman::Algorithm::race), 200, 20, 64})
    ->Iterations(9)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
