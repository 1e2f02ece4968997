// SMC end to end on data drawn from the model: the sizes Henao & Lucas report for MPost2
// ((n, d, N) = (32, 32, 100): 1.98 s and (64, 64, 100): 6.1 s in their paper), a larger one, and
// every proposal at a small size; every proposal of the binary likelihood; and the proposals
// that take missing entries, with and without them. Counters:
// particle-steps per second.
#include <benchmark/benchmark.h>

#include <cmath>

#include "binary_table.hpp"
#include "kingman/inference/discrete_smc.hpp"
#include "kingman/inference/smc.hpp"
#include "kingman/model/covariance.hpp"
#include "kingman/model/generate.hpp"

namespace {

kingman::WhitenedData model_data(std::size_t n, std::size_t d) {
  kingman::GenerateOptions options;
  options.n = n;
  options.d = d;
  options.seed = 11;
  return kingman::whiten(kingman::generate(options).data, kingman::Covariance::identity(d));
}

void run(benchmark::State& state, kingman::Algorithm proposal, const kingman::WhitenedData& data,
         std::size_t particles, int threads) {
  const std::size_t n = data.n;
  kingman::SmcOptions options;
  options.proposal = proposal;
  options.particles = particles;
  options.threads = threads;
  double evidence = 0.0;
  for (auto _ : state) {
    const kingman::SmcResult result = kingman::run_smc(data, 0.0, options);
    // The const overload: the "+r" form of DoNotOptimize can clobber a double in this version.
    benchmark::DoNotOptimize(result.log_evidence);
    evidence = result.log_evidence;
  }
  state.counters["particle_steps_per_s"] = benchmark::Counter(
      static_cast<double>(particles * (n - 1)), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["log_evidence"] = evidence;
}

void BM_Mpost2(benchmark::State& state) {
  run(state, kingman::Algorithm::mpost2,
      model_data(static_cast<std::size_t>(state.range(0)),
                 static_cast<std::size_t>(state.range(1))),
      static_cast<std::size_t>(state.range(2)), static_cast<int>(state.range(3)));
}
BENCHMARK(BM_Mpost2)
    ->ArgNames({"n", "d", "N", "threads"})
    ->Args({32, 32, 100, 1})
    ->Args({64, 64, 100, 1})
    ->Args({64, 64, 100, 2})
    ->Args({500, 256, 10, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same runs on 1 to 16 threads, for many-core machines: cpu_time is the whole process's
// (every thread's), so it shows what each added thread costs, and real_time the speedup. On a
// machine with fewer cores the larger counts oversubscribe it; select them with a filter.
void BM_Mpost2Threads(benchmark::State& state) {
  BM_Mpost2(state);
}
BENCHMARK(BM_Mpost2Threads)
    ->ArgNames({"n", "d", "N", "threads"})
    ->ArgsProduct({{64}, {64}, {100}, {1, 2, 4, 8, 16}})
    ->ArgsProduct({{400}, {20}, {64}, {1, 2, 4, 8, 16}})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

void BM_Proposal(benchmark::State& state) {
  const auto proposal = static_cast<kingman::Algorithm>(state.range(0));
  state.SetLabel(kingman::to_string(proposal));
  run(state, proposal, model_data(64, 16), 100, 1);
}
BENCHMARK(BM_Proposal)
    ->ArgName("proposal")
    ->DenseRange(static_cast<int>(kingman::Algorithm::priorprior),
                 static_cast<int>(kingman::Algorithm::mpost2))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Binary data (bench/binary_table.hpp, one mutation rate), n = 60, d = 20, 16 particles:
// PriorPrior, PriorPost, PostPost and the race.
void BM_DiscreteProposal(benchmark::State& state) {
  const auto proposal = static_cast<kingman::Algorithm>(state.range(0));
  state.SetLabel(kingman::to_string(proposal));
  const std::size_t n = 60, particles = 16;
  const kingman::DiscreteData data = kingman::bench::binary_data(n, 20, false);
  kingman::SmcOptions options;
  options.proposal = proposal;
  options.particles = particles;
  options.threads = 1;
  double evidence = 0.0;
  for (auto _ : state) {
    const kingman::SmcResult result = kingman::run_smc(data, options);
    benchmark::DoNotOptimize(result.log_evidence);
    evidence = result.log_evidence;
  }
  state.counters["particle_steps_per_s"] = benchmark::Counter(
      static_cast<double>(particles * (n - 1)), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["log_evidence"] = evidence;
}
BENCHMARK(BM_DiscreteProposal)
    ->ArgName("proposal")
    ->Arg(static_cast<int>(kingman::Algorithm::priorprior))
    ->Arg(static_cast<int>(kingman::Algorithm::priorpost))
    ->Arg(static_cast<int>(kingman::Algorithm::postpost))
    ->Arg(static_cast<int>(kingman::Algorithm::race))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Brownian data with missing entries (missing_smc.cpp: per-dimension messages and duration laws)
// beside the same table complete: n = 60, d = 10, 16 particles, every 10th entry missing
// (missing:1) or none (missing:0), every proposal.
void BM_MissingDataProposal(benchmark::State& state) {
  const auto proposal = static_cast<kingman::Algorithm>(state.range(0));
  state.SetLabel(kingman::to_string(proposal));
  kingman::WhitenedData data = model_data(60, 10);
  if (state.range(1) != 0) {
    for (std::size_t k = 3; k < data.x.size(); k += 10) data.x[k] = std::nan("");
    data.has_missing = true;
  }
  run(state, proposal, data, 16, 1);
}
BENCHMARK(BM_MissingDataProposal)
    ->ArgNames({"proposal", "missing"})
    ->ArgsProduct({{static_cast<int>(kingman::Algorithm::priorprior),
                    static_cast<int>(kingman::Algorithm::priorpost),
                    static_cast<int>(kingman::Algorithm::postpost),
                    static_cast<int>(kingman::Algorithm::mpost1),
                    static_cast<int>(kingman::Algorithm::mpost2),
                    static_cast<int>(kingman::Algorithm::race)},
                   {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
