// Google Benchmark timings of the numeric kernels the SMC engine calls per pair and per step.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <vector>

#include "kingman/kernels/gig.hpp"
#include "kingman/kernels/log_bessel_k.hpp"
#include "kingman/kernels/resampling.hpp"
#include "kingman/kernels/rng.hpp"
#include "kingman/kernels/weights.hpp"

namespace {

using namespace kingman::kernels;

// Arguments cycle through a small set so that no branch is predicted trivially.
void bench_log_bessel_k(benchmark::State& state, double nu) {
  const double arguments[] = {1e-6, 0.3, 1.7, 2.5, 9.0, 40.0, 300.0, 5e3};
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(log_bessel_k(nu, arguments[i++ % 8]));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(bench_log_bessel_k, small_order_0_5_d3, -0.5);
BENCHMARK_CAPTURE(bench_log_bessel_k, order_9_d20, -9.0);
BENCHMARK_CAPTURE(bench_log_bessel_k, order_24_5_recurrence, 24.5);
BENCHMARK_CAPTURE(bench_log_bessel_k, order_127_debye_d256, -127.0);
BENCHMARK_CAPTURE(bench_log_bessel_k, order_499_debye_d1000, -499.0);

// The merge-time integral I(r) with r at various places relative to the mode (d = 20 and 256).
void bench_log_gig_upper_integral(benchmark::State& state, double p, double chi, double psi) {
  const double radii[] = {1e-3, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0, 100.0};
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(log_gig_upper_integral(p, chi, psi, radii[i++ % 8]));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(bench_log_gig_upper_integral, d20, -9.0, 50.0, 45.0);
BENCHMARK_CAPTURE(bench_log_gig_upper_integral, d256, -127.0, 600.0, 4950.0);
BENCHMARK_CAPTURE(bench_log_gig_upper_integral, d2_flat, 0.0, 1e-4, 1.0);

void bench_log_gig_normalizer(benchmark::State& state) {
  const double chis[] = {1e-3, 0.5, 3.0, 50.0, 900.0};
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(log_gig_normalizer(-9.0, chis[i++ % 5], 45.0));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(bench_log_gig_normalizer);

// One draw per call including the envelope set-up (what a per-pair proposal pays), and
// repeated draws from one sampler.
void bench_sample_truncated_gig(benchmark::State& state, double p, double chi, double psi,
                                double r) {
  RandomStream stream(1, 2);
  for (auto _ : state) {
    benchmark::DoNotOptimize(sample_truncated_gig(p, chi, psi, r, stream));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(bench_sample_truncated_gig, d20_untruncated, -9.0, 50.0, 45.0, 0.0);
BENCHMARK_CAPTURE(bench_sample_truncated_gig, d20_far_tail, -9.0, 50.0, 1.0, 300.0);
BENCHMARK_CAPTURE(bench_sample_truncated_gig, d256, -127.0, 1e4, 4950.0, 1.0);

void bench_truncated_gig_sampler_reuse(benchmark::State& state) {
  RandomStream stream(1, 3);
  const TruncatedGigSampler sampler(-9.0, 50.0, 45.0, 0.5);
  for (auto _ : state) benchmark::DoNotOptimize(sampler(stream));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(bench_truncated_gig_sampler_reuse);

void bench_resample(benchmark::State& state, ResamplingScheme scheme) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  RandomStream source(9, 9);
  std::vector<double> log_weights(n), weights(n);
  for (double& w : log_weights) w = 3.0 * source.normal();
  normalize_log_weights(log_weights, weights);
  std::vector<std::size_t> ancestors(n);
  RandomStream stream(4, 4);
  for (auto _ : state) {
    resample(scheme, weights, stream, ancestors);
    benchmark::DoNotOptimize(ancestors.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK_CAPTURE(bench_resample, systematic, ResamplingScheme::systematic)->Arg(1000)->Arg(100000);
BENCHMARK_CAPTURE(bench_resample, stratified, ResamplingScheme::stratified)->Arg(1000)->Arg(100000);
BENCHMARK_CAPTURE(bench_resample, residual, ResamplingScheme::residual)->Arg(1000)->Arg(100000);
BENCHMARK_CAPTURE(bench_resample, multinomial, ResamplingScheme::multinomial)
    ->Arg(1000)
    ->Arg(100000);

}  // namespace
