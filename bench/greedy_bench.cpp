// Greedy-Rate1 (and the O(n^3) rescanning variants at small n) on data drawn from the model.
// Counters: pairs scored per second, and the pair storage in bytes.
#include <benchmark/benchmark.h>

#include "kingman/inference/greedy.hpp"
#include "kingman/model/covariance.hpp"
#include "kingman/model/generate.hpp"

namespace {

kingman::WhitenedData model_data(std::size_t n, std::size_t d) {
  kingman::GenerateOptions options;
  options.n = n;
  options.d = d;
  options.seed = 7;
  const kingman::GeneratedData generated = kingman::generate(options);
  return kingman::whiten(generated.data, kingman::Covariance::identity(d));
}

void BM_GreedyRate1(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto d = static_cast<std::size_t>(state.range(1));
  const kingman::WhitenedData data = model_data(n, d);
  for (auto _ : state) {
    kingman::MergeTree tree = kingman::greedy_rate1(data, 0.0);
    benchmark::DoNotOptimize(tree.merges.data());
  }
  const double pairs = 0.5 * static_cast<double>(n) * static_cast<double>(n - 1);
  state.counters["pairs_per_s"] =
      benchmark::Counter(pairs, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["pair_bytes"] = pairs * sizeof(double);
}
BENCHMARK(BM_GreedyRate1)
    ->Args({1000, 20})
    ->Args({2000, 20})
    ->Args({5000, 20})
    ->Args({10000, 20})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_GreedyRescan(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto algorithm = static_cast<kingman::Algorithm>(state.range(1));
  const kingman::WhitenedData data = model_data(n, 20);
  for (auto _ : state) {
    kingman::MergeTree tree = kingman::greedy_rescan(data, 0.0, algorithm);
    benchmark::DoNotOptimize(tree.merges.data());
  }
  state.SetLabel(kingman::to_string(algorithm));
}
BENCHMARK(BM_GreedyRescan)
    ->Args({500, static_cast<int>(kingman::Algorithm::greedy_minduration)})
    ->Args({500, static_cast<int>(kingman::Algorithm::greedy_maxprob)})
    ->Args({500, static_cast<int>(kingman::Algorithm::mgreedy)})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
