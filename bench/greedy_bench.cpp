// Greedy-Rate1 (and the O(n^3) rescanning variants at small n) on data drawn from the model,
// complete or with entries missing, and on binary data under the discrete likelihood (one
// mutation rate, or one per column). Counters: pairs scored per second, and the pair storage in
// bytes.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "binary_table.hpp"
#include "kingman/inference/discrete_greedy.hpp"
#include "kingman/inference/greedy.hpp"
#include "kingman/model/covariance.hpp"
#include "kingman/model/discrete_data.hpp"
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

// The same data with a fraction of its entries missing (drawn with a fixed seed; never a whole
// row): every pair's duration then comes from the per-dimension mode (merge_duration.hpp).
kingman::WhitenedData with_missing(kingman::WhitenedData data, double fraction) {
  std::mt19937_64 engine(3);
  std::bernoulli_distribution missing(fraction);
  for (std::size_t i = 0; i < data.n; ++i)
    for (std::size_t j = 1; j < data.d; ++j)  // column 0 stays observed
      if (missing(engine)) data.x[i * data.d + j] = std::nan("");
  data.has_missing = true;
  return data;
}

// Pairs scored per second: n(n-1)/2 per run, each scored once when it is created.
double set_pairs_per_second(benchmark::State& state, std::size_t n) {
  const double pairs = 0.5 * static_cast<double>(n) * static_cast<double>(n - 1);
  state.counters["pairs_per_s"] =
      benchmark::Counter(pairs, benchmark::Counter::kIsIterationInvariantRate);
  return pairs;
}

void BM_GreedyRate1(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto d = static_cast<std::size_t>(state.range(1));
  const kingman::WhitenedData data = model_data(n, d);
  for (auto _ : state) {
    kingman::MergeTree tree = kingman::greedy_rate1(data, 0.0);
    benchmark::DoNotOptimize(tree.merges.data());
  }
  state.counters["pair_bytes"] = set_pairs_per_second(state, n) * sizeof(double);
}
BENCHMARK(BM_GreedyRate1)
    ->Args({1000, 20})
    ->Args({2000, 20})
    ->Args({5000, 20})
    ->Args({10000, 20})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_GreedyRate1Missing(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto d = static_cast<std::size_t>(state.range(1));
  const kingman::WhitenedData data = with_missing(model_data(n, d), 0.1);
  for (auto _ : state) {
    kingman::MergeTree tree = kingman::greedy_rate1(data, 0.01);
    benchmark::DoNotOptimize(tree.merges.data());
  }
  set_pairs_per_second(state, n);
}
BENCHMARK(BM_GreedyRate1Missing)
    ->Args({1000, 10})
    ->Args({2000, 10})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Binary n x d data, 30 % ones and 10 % missing (fixed seed), with the data's equilibrium; the
// mutation rate is 1 in every column, or cycles through 0.5, 1, 2 (per-column rates take the
// certified search of discrete_merge_time_per_column.cpp).
void BM_DiscreteGreedyRate1(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const kingman::DiscreteData data = kingman::bench::binary_data(n, 20, state.range(1) != 0);
  for (auto _ : state) {
    kingman::MergeTree tree = kingman::greedy_rate1(data);
    benchmark::DoNotOptimize(tree.merges.data());
  }
  state.SetLabel(state.range(1) != 0 ? "per-column rates" : "one rate");
  set_pairs_per_second(state, n);
}
BENCHMARK(BM_DiscreteGreedyRate1)
    ->ArgNames({"n", "per_column"})
    ->Args({500, 0})
    ->Args({2000, 0})
    ->Args({500, 1})
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
// MinDuration and MGreedy rescore only the rows their bounds leave (about O(n^2)): larger sizes
// than MaxProb's O(n^3).
BENCHMARK(BM_GreedyRescan)
    ->Args({500, static_cast<int>(kingman::Algorithm::greedy_minduration)})
    ->Args({500, static_cast<int>(kingman::Algorithm::greedy_maxprob)})
    ->Args({500, static_cast<int>(kingman::Algorithm::mgreedy)})
    ->Args({2000, static_cast<int>(kingman::Algorithm::greedy_minduration)})
    ->Args({2000, static_cast<int>(kingman::Algorithm::mgreedy)})
    ->Args({5000, static_cast<int>(kingman::Algorithm::greedy_minduration)})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
