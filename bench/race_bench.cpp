// The regenerative race (O(n^2) per particle, MODEL.md section 6) against MPost2 (O(n^3) per
// particle) on data drawn from the model, d = 20, 64 particles, one thread, n = 100 to 2000.
// Counters: seconds per particle, particle-steps per second, and the log evidence (the race's
// is usually much higher at equal particle counts: its estimate degenerates less).
//
//   build/bench/race_bench --benchmark_filter='Race|Mpost2'            all sizes (~20 min)
//   build/bench/race_bench --benchmark_filter='/n:(100|200|500)/'      the small ones
#include <benchmark/benchmark.h>

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

void run(benchmark::State& state, kingman::Algorithm algorithm) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto d = static_cast<std::size_t>(state.range(1));
  const auto particles = static_cast<std::size_t>(state.range(2));
  const kingman::WhitenedData data = model_data(n, d);
  kingman::SmcOptions options;
  options.proposal = algorithm;
  options.particles = particles;
  options.threads = static_cast<int>(state.range(3));
  double evidence = 0.0;
  for (auto _ : state) {
    const kingman::SmcResult result = kingman::run_smc(data, 0.0, options);
    benchmark::DoNotOptimize(result.log_evidence);
    evidence = result.log_evidence;
  }
  state.counters["s_per_particle"] = benchmark::Counter(
      static_cast<double>(particles),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["particle_steps_per_s"] = benchmark::Counter(
      static_cast<double>(particles * (n - 1)), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["log_evidence"] = evidence;
}

void sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n", "d", "N", "threads"});
  for (int n : {100, 200, 500, 1000, 2000}) b->Args({n, 20, 64, 1});
  b->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
}

void BM_Race(benchmark::State& state) {
  run(state, kingman::Algorithm::race);
}
BENCHMARK(BM_Race)->Apply(sizes);

void BM_Mpost2(benchmark::State& state) {
  run(state, kingman::Algorithm::mpost2);
}
BENCHMARK(BM_Mpost2)->Apply(sizes);

}  // namespace
