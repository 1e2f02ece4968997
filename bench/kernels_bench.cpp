// Google Benchmark timings of the numeric kernels the SMC engine calls per pair and per step.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "kingman/kernels/fixed_order_bessel.hpp"
#include "kingman/kernels/gig.hpp"
#include "kingman/kernels/log_bessel_k.hpp"
#include "kingman/kernels/offset_sums.hpp"
#include "kingman/kernels/pair_kernels.hpp"
#include "kingman/kernels/resampling.hpp"
#include "kingman/kernels/rng.hpp"
#include "kingman/kernels/vector_math.hpp"
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

// All n(n-1)/2 squared distances of n = 2000 Gaussian points (d = 20 and 256), three ways: the
// scalar reference pair by pair, the SIMD difference form row by row (one point against the
// block of later points), and the blocked product form (PairDistanceTiles: Eigen GEMM per tile,
// cancelling pairs recomputed). Items: pairs.
std::vector<double> gaussian_points(std::size_t n, std::size_t d) {
  RandomStream stream(6, 6);
  std::vector<double> x(n * d);
  for (double& value : x) value = stream.normal();
  return x;
}
void bench_pairs_reference(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto d = static_cast<std::size_t>(state.range(1));
  const std::vector<double> x = gaussian_points(n, d);
  std::vector<double> out(n);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j)
        out[j] = squared_distance_reference(x.data() + i * d, x.data() + j * d, d);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n * (n - 1) / 2));
}
BENCHMARK(bench_pairs_reference)
    ->Args({2000, 20})
    ->Args({2000, 256})
    ->Unit(benchmark::kMillisecond);
void bench_pairs_simd_rows(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto d = static_cast<std::size_t>(state.range(1));
  const std::vector<double> x = gaussian_points(n, d);
  std::vector<double> out(n);
  for (auto _ : state) {
    for (std::size_t i = 0; i + 1 < n; ++i) {
      squared_distances_to_block(x.data() + i * d, x.data() + (i + 1) * d, n - i - 1, d, d,
                                 out.data());
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n * (n - 1) / 2));
}
BENCHMARK(bench_pairs_simd_rows)
    ->Args({2000, 20})
    ->Args({2000, 64})
    ->Args({2000, 256})
    ->Unit(benchmark::kMillisecond);
void bench_pairs_blocked(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto d = static_cast<std::size_t>(state.range(1));
  const std::vector<double> x = gaussian_points(n, d);
  std::vector<double> tile(PairDistanceTiles::kTile * PairDistanceTiles::kTile);
  for (auto _ : state) {
    const PairDistanceTiles tiles(x.data(), n, d);  // centring and norms included
    for (std::size_t a = 0; a < tiles.tile_count(); ++a) {
      for (std::size_t b = a; b < tiles.tile_count(); ++b) {
        tiles.compute(a, b, tile.data());
        benchmark::DoNotOptimize(tile.data());
      }
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n * (n - 1) / 2));
}
BENCHMARK(bench_pairs_blocked)->Args({2000, 20})->Args({2000, 256})->Unit(benchmark::kMillisecond);
// One point against rows scattered in memory (the SMC's new clusters, Greedy-Rate1's rows).
void bench_distances_to_rows(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto d = static_cast<std::size_t>(state.range(1));
  const std::vector<double> x = gaussian_points(n + 1, d);
  std::vector<const double*> rows(n);
  for (std::size_t i = 0; i < n; ++i) rows[i] = x.data() + (i + 1) * d;
  std::vector<double> out(n);
  for (auto _ : state) {
    squared_distances_to_rows(x.data(), rows.data(), n, d, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(bench_distances_to_rows)->Args({64, 64})->Args({1000, 20})->Args({1000, 256});
// MPost2's row sums: m rows of lengths 1..m against one weight vector.
void bench_dots_with(benchmark::State& state) {
  const auto m = static_cast<std::size_t>(state.range(0));
  const std::vector<double> x = gaussian_points(m + 1, m);
  std::vector<const double*> rows(m);
  std::vector<std::size_t> lengths(m);
  for (std::size_t i = 0; i < m; ++i) {
    rows[i] = x.data() + (i + 1) * m;
    lengths[i] = i + 1;
  }
  std::vector<double> out(m);
  for (auto _ : state) {
    dots_with(rows.data(), lengths.data(), m, x.data(), out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(m * (m + 1) / 2));
}
BENCHMARK(bench_dots_with)->Arg(64)->Arg(128)->Arg(1000);

// The per-dimension merge-time search of a pair whose clusters observe different dimensions
// (Greedy on data with missing entries, offset_sums.hpp): 64 pairs of rows with 10 % of the
// dimensions unobserved and per-dimension variances spread over a factor of 4, their terms
// gathered (gather_offsets), and the plain Newton steps from the pooled start (offset_newton).
// Items: pairs.
struct OffsetPairs {
  std::size_t d = 0, padded = 0, count = 64;
  std::vector<double> means, variances;  // 2 * count padded rows each
};
OffsetPairs offset_pairs(std::size_t d) {
  OffsetPairs pairs;
  pairs.d = d;
  pairs.padded = padded_size(d);
  const std::vector<double> x = gaussian_points(2 * pairs.count, d);
  pairs.means.assign(2 * pairs.count * pairs.padded, 0.0);
  pairs.variances.assign(2 * pairs.count * pairs.padded, std::numeric_limits<double>::infinity());
  RandomStream stream(7, 0);
  for (std::size_t r = 0; r < 2 * pairs.count; ++r) {
    for (std::size_t j = 0; j < d; ++j) {
      if (stream.uniform() < 0.1) continue;  // unobserved: variance +inf
      pairs.means[r * pairs.padded + j] = x[r * d + j];
      pairs.variances[r * pairs.padded + j] = 0.05 + 0.15 * stream.uniform();
    }
  }
  return pairs;
}
void bench_gather_offsets(benchmark::State& state) {
  const OffsetPairs pairs = offset_pairs(static_cast<std::size_t>(state.range(0)));
  std::vector<double> offsets(pairs.padded), squared(pairs.padded);
  OffsetSummary summary{};
  std::size_t p = 0;
  for (auto _ : state) {
    const std::size_t left = 2 * p * pairs.padded, right = left + pairs.padded;
    gather_offsets(pairs.means.data() + left, pairs.variances.data() + left,
                   pairs.means.data() + right, pairs.variances.data() + right, pairs.d, 0.0,
                   offsets.data(), squared.data(), summary);
    benchmark::DoNotOptimize(summary);
    p = (p + 1) % pairs.count;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(bench_gather_offsets)->Arg(10)->Arg(20)->Arg(64);
void bench_offset_newton(benchmark::State& state) {
  const OffsetPairs pairs = offset_pairs(static_cast<std::size_t>(state.range(0)));
  // Each pair's terms and its pooled start (linear-scale mode, rate 1), prepared once.
  struct Search {
    std::vector<double> offsets, squared;
    double base, start;
    OffsetNewtonTerms terms;
  };
  std::vector<Search> searches(pairs.count);
  for (std::size_t p = 0; p < pairs.count; ++p) {
    Search& search = searches[p];
    search.offsets.resize(pairs.padded);
    search.squared.resize(pairs.padded);
    const std::size_t left = 2 * p * pairs.padded, right = left + pairs.padded;
    OffsetSummary summary{};
    gather_offsets(pairs.means.data() + left, pairs.variances.data() + left,
                   pairs.means.data() + right, pairs.variances.data() + right, pairs.d, 0.0,
                   search.offsets.data(), search.squared.data(), summary);
    const double k = static_cast<double>(summary.count);
    const double mean = summary.sum / k;
    const double pooled_s =
        2.0 * summary.squared_distance / (std::sqrt(k * k + 4.0 * summary.squared_distance) + k);
    search.base = summary.least;
    search.start = std::max(1e-3 * (mean - summary.least), summary.least + (pooled_s - mean));
    search.terms = {1.0, 0.0, mean - summary.least};
  }
  std::size_t p = 0;
  for (auto _ : state) {
    const Search& search = searches[p];
    benchmark::DoNotOptimize(offset_newton(search.offsets.data(), search.squared.data(),
                                           pairs.padded, search.base, search.terms, search.start,
                                           1e-300));
    p = (p + 1) % pairs.count;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(bench_offset_newton)->Arg(10)->Arg(20)->Arg(64);

// MPost2's per-pair term p/2 log x + log K_p(sqrt x) over a row of 1000 squared distances
// (d = 64, p = -31, x spread over six decades): one scalar call per pair (the fit's scalar
// reference) against the batch in SIMD lanes. Items: pairs.
std::vector<double> bessel_arguments(std::size_t count) {
  RandomStream stream(5, 5);
  std::vector<double> x(count);
  for (double& value : x) value = std::exp(std::log(1e-2) + std::log(1e6) * stream.uniform());
  return x;
}
void bench_mpost2_terms_scalar(benchmark::State& state) {
  const LogBesselKFixedOrder fit(-31.0, 1e-3, 1e5, -15.5);
  const std::vector<double> x = bessel_arguments(1000);
  std::vector<double> out(x.size());
  for (auto _ : state) {
    for (std::size_t i = 0; i < x.size(); ++i) out[i] = fit.term(x[i]);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(x.size()));
}
BENCHMARK(bench_mpost2_terms_scalar);
// Batches of Arg(0) pairs: 1000, and 31, the mean row of MPost2 at n = 64 (rows of a new
// cluster against the other live clusters), where the per-call costs show.
void bench_mpost2_terms_batch(benchmark::State& state) {
  const LogBesselKFixedOrder fit(-31.0, 1e-3, 1e5, -15.5);
  const std::vector<double> x = bessel_arguments(1000);
  std::vector<double> out(x.size());
  const std::size_t batch = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    for (std::size_t begin = 0; begin + batch <= x.size(); begin += batch)
      fit.terms(x.data() + begin, out.data() + begin, batch);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(x.size() / batch * batch));
}
BENCHMARK(bench_mpost2_terms_batch)->Arg(1000)->Arg(31);
// The fit itself, once per run: over eight decades, MPost2's range at (64, 64, 100) (a millionth
// of the smallest leaf distance up to the largest).
void bench_mpost2_terms_fit(benchmark::State& state) {
  for (auto _ : state) {
    const LogBesselKFixedOrder fit(-31.0, 1e-5, 1e3, -15.5);
    benchmark::DoNotOptimize(fit.pieces());
  }
}
BENCHMARK(bench_mpost2_terms_fit)->Unit(benchmark::kMicrosecond);

// exp and log of 1000 values: libm one call at a time against the vectorized arrays.
void bench_exp_libm(benchmark::State& state) {
  std::vector<double> x = bessel_arguments(1000), out(x.size());
  for (double& value : x) value = -std::log(value) * 10.0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < x.size(); ++i) out[i] = std::exp(x[i]);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(x.size()));
}
BENCHMARK(bench_exp_libm);
void bench_exp_array(benchmark::State& state) {
  std::vector<double> x = bessel_arguments(1000), out(x.size());
  for (double& value : x) value = -std::log(value) * 10.0;
  for (auto _ : state) {
    exp_array(x.data(), out.data(), x.size());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(x.size()));
}
BENCHMARK(bench_exp_array);
void bench_exp_with_complement_array(benchmark::State& state) {
  const std::vector<double> x = bessel_arguments(1000);
  std::vector<double> y(x.size()), e(x.size()), complement(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = -x[i];
  for (auto _ : state) {
    exp_with_complement_array(y.data(), e.data(), complement.data(), y.size());
    benchmark::DoNotOptimize(e.data());
    benchmark::DoNotOptimize(complement.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(y.size()));
}
BENCHMARK(bench_exp_with_complement_array);
void bench_log_libm(benchmark::State& state) {
  const std::vector<double> x = bessel_arguments(1000);
  std::vector<double> out(x.size());
  for (auto _ : state) {
    for (std::size_t i = 0; i < x.size(); ++i) out[i] = std::log(x[i]);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(x.size()));
}
BENCHMARK(bench_log_libm);
void bench_log_array(benchmark::State& state) {
  const std::vector<double> x = bessel_arguments(1000);
  std::vector<double> out(x.size());
  for (auto _ : state) {
    log_array(x.data(), out.data(), x.size());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(x.size()));
}
BENCHMARK(bench_log_array);

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
