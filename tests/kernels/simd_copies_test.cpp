// Every copy of the array kernels (simd_level.hpp) that this CPU can run gives the baseline
// copy's bits, kernel by kernel, on inputs that reach each kernel's whole blocks, its tails and
// its side-by-side rows; and the level can be chosen, within what the CPU has, from the
// environment. (On a CPU without AVX-512 or AVX2 the missing copies cannot run, and the tests
// compare the ones it has.)
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "kingman/kernels/fixed_order_bessel.hpp"
#include "kingman/kernels/gig.hpp"
#include "kingman/kernels/gig_tail.hpp"
#include "kingman/kernels/maxprob_bounds.hpp"
#include "kingman/kernels/mode_durations.hpp"
#include "kingman/kernels/offset_sums.hpp"
#include "kingman/kernels/pair_kernels.hpp"
#include "kingman/kernels/simd_level.hpp"
#include "kingman/kernels/vector_math.hpp"

namespace kingman::kernels {
namespace {

// Restores the level the test found.
class LevelGuard {
 public:
  LevelGuard() : saved_(simd_level()) {}
  ~LevelGuard() { set_simd_level(saved_); }
  LevelGuard(const LevelGuard&) = delete;
  LevelGuard& operator=(const LevelGuard&) = delete;

 private:
  SimdLevel saved_;
};

std::vector<SimdLevel> runnable_levels() {
  std::vector<SimdLevel> levels;
  for (const SimdLevel level : {SimdLevel::baseline, SimdLevel::avx2, SimdLevel::avx512})
    if (static_cast<int>(level) <= static_cast<int>(widest_simd_level())) levels.push_back(level);
  return levels;
}

// compute() at every runnable level gives the baseline's values bit for bit (NaN included).
void expect_same_bits_in_every_copy(const std::function<std::vector<double>()>& compute,
                                    const char* what) {
  LevelGuard guard;
  set_simd_level(SimdLevel::baseline);
  const std::vector<double> baseline = compute();
  ASSERT_FALSE(baseline.empty()) << what;
  for (const SimdLevel level : runnable_levels()) {
    set_simd_level(level);
    const std::vector<double> values = compute();
    ASSERT_EQ(values.size(), baseline.size()) << what;
    for (std::size_t k = 0; k < values.size(); ++k) {
      EXPECT_EQ(std::bit_cast<std::uint64_t>(values[k]), std::bit_cast<std::uint64_t>(baseline[k]))
          << what << ": entry " << k << " is " << values[k] << " in the " << to_string(level)
          << " copy and " << baseline[k] << " in the baseline";
    }
  }
}

std::vector<double> normal_values(std::size_t count, double centre, double scale,
                                  std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal(centre, scale);
  std::vector<double> values(count);
  for (double& v : values) v = normal(engine);
  return values;
}

TEST(SimdCopies, TheLevelCanBeChosenWithinWhatTheCpuHas) {
  LevelGuard guard;
  for (const SimdLevel level : runnable_levels()) {
    set_simd_level(level);
    EXPECT_EQ(simd_level(), level);
  }
  if (widest_simd_level() != SimdLevel::avx512) {
    const auto beyond = static_cast<SimdLevel>(static_cast<int>(widest_simd_level()) + 1);
    EXPECT_THROW(set_simd_level(beyond), std::invalid_argument);
  }
  EXPECT_THROW(set_simd_level(static_cast<SimdLevel>(7)), std::invalid_argument);
}

// The library reads the widest level from glibc's record of the CPU, without a CPUID of its
// own (simd_level.cpp): it must be what GCC's own probe of the CPU and the operating system
// finds, wherever the copies are built (GCC on x86-64).
TEST(SimdCopies, TheWidestLevelIsWhatTheCpuAndSystemRun) {
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
  __builtin_cpu_init();
  SimdLevel expected = SimdLevel::baseline;
  if (__builtin_cpu_supports("avx512f")) {
    expected = SimdLevel::avx512;
  } else if (__builtin_cpu_supports("avx2")) {
    expected = SimdLevel::avx2;
  }
  EXPECT_EQ(widest_simd_level(), expected);
#else
  EXPECT_EQ(widest_simd_level(), SimdLevel::baseline);
#endif
}

TEST(SimdCopies, TheEnvironmentChoosesTheLevelAndBadNamesAreRefused) {
  LevelGuard guard;
  ASSERT_EQ(unsetenv("KINGMAN_SIMD"), 0);
  EXPECT_FALSE(apply_simd_level_from_environment());
  ASSERT_EQ(setenv("KINGMAN_SIMD", "baseline", 1), 0);
  EXPECT_TRUE(apply_simd_level_from_environment());
  EXPECT_EQ(simd_level(), SimdLevel::baseline);
  ASSERT_EQ(setenv("KINGMAN_SIMD", to_string(widest_simd_level()).data(), 1), 0);
  EXPECT_TRUE(apply_simd_level_from_environment());
  EXPECT_EQ(simd_level(), widest_simd_level());
  ASSERT_EQ(setenv("KINGMAN_SIMD", "sse9", 1), 0);
  try {
    apply_simd_level_from_environment();
    ADD_FAILURE() << "KINGMAN_SIMD=sse9 was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("sse9"), std::string::npos) << error.what();
  }
  ASSERT_EQ(unsetenv("KINGMAN_SIMD"), 0);
}

TEST(SimdCopies, PairKernelsAgree) {
  // Dimensions with no whole block, whole blocks only, and every tail length; rows of several
  // lengths so that dots_with's four rows side by side stop at different places.
  for (const std::size_t d : {1u, 3u, 4u, 7u, 8u, 13u, 16u, 20u, 31u, 64u, 65u}) {
    const std::size_t count = 11;
    const std::vector<double> x = normal_values((count + 1) * d, 2.0, 3.0, d);
    std::vector<const double*> rows(count);
    for (std::size_t r = 0; r < count; ++r) rows[r] = x.data() + (1 + (r * 5) % count) * d;
    expect_same_bits_in_every_copy(
        [&] {
          std::vector<double> out(4 * count + 2);
          squared_distances_in_order(x.data(), rows.data(), count, d, out.data() + 3 * count + 2);
          squared_distances_to_rows(x.data(), rows.data(), count, d, out.data());
          squared_distances_to_block(x.data(), x.data() + d, count, d, d, out.data() + count);
          std::vector<std::size_t> lengths(count);
          for (std::size_t r = 0; r < count; ++r) lengths[r] = (d * (r + 3)) % (d + 1);
          dots_with(rows.data(), lengths.data(), count, x.data(), out.data() + 2 * count);
          // Rows rescored together: three rows from partners 0, 3 and 9 (the last in a
          // partial block).
          const double* queries[3] = {rows[2], rows[4], rows[7]};
          const std::size_t first[3] = {0, 3, 9};
          std::vector<double> shared(3 * count);
          double* shared_rows[3] = {shared.data(), shared.data() + count,
                                    shared.data() + 2 * count};
          squared_distances_in_order_shared(queries, first, 3, rows.data(), count, d, shared_rows);
          out[3 * count] = squared_distance(x.data(), rows[0], d);
          out[3 * count + 1] = dot(x.data(), rows[1], d);
          for (std::size_t q = 0; q < 3; ++q)
            out.insert(out.end(), shared_rows[q], shared_rows[q] + (count - first[q]));
          return out;
        },
        "pair kernels");
  }
}

TEST(SimdCopies, OffsetKernelsAgree) {
  std::mt19937_64 engine(3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const std::size_t d : {1u, 5u, 8u, 9u, 20u, 64u, 70u}) {
    const std::size_t padded = padded_size(d);
    // Means and variances padded as BrownianMessages pads them; some dimensions unobserved.
    std::vector<double> left_mean(padded, 0.0), right_mean(padded, 0.0);
    std::vector<double> left_variance(padded, INFINITY), right_variance(padded, INFINITY);
    for (std::size_t j = 0; j < d; ++j) {
      left_mean[j] = 4.0 * unit(engine) - 2.0;
      right_mean[j] = 4.0 * unit(engine) - 2.0;
      left_variance[j] = j % 4 == 1 ? INFINITY : 0.1 + unit(engine);
      right_variance[j] = j % 7 == 3 ? INFINITY : 0.1 + unit(engine);
    }
    expect_same_bits_in_every_copy(
        [&] {
          std::vector<double> offsets(padded), squared(padded);
          OffsetSummary summary{};
          gather_offsets(left_mean.data(), left_variance.data(), right_mean.data(),
                         right_variance.data(), d, 0.25, offsets.data(), squared.data(), summary);
          std::vector<double> out = offsets;
          out.insert(out.end(), squared.begin(), squared.end());
          out.insert(out.end(), {static_cast<double>(summary.count), summary.least,
                                 summary.greatest, summary.sum, summary.squared_distance});
          const double base = summary.count ? summary.least : 1.0;
          for (const double x : {0.01, 0.5, 3.0}) {
            const OffsetSlope slope = offset_slope(offsets.data(), squared.data(), padded, base, x);
            out.insert(out.end(), {slope.value, slope.change});
          }
          const OffsetNewtonTerms terms{1.5, 1.0, 0.3};
          const OffsetNewton newton =
              offset_newton(offsets.data(), squared.data(), padded, base, terms, 0.2, 0.0);
          out.insert(out.end(), {newton.converged ? 1.0 : 0.0, newton.x});
          return out;
        },
        "offset kernels");
  }
}

TEST(SimdCopies, ElementwiseKernelsAgree) {
  for (const std::size_t count : {1u, 7u, 8u, 9u, 31u, 100u}) {
    const std::vector<double> x = normal_values(count, 0.0, 200.0, count);
    std::vector<double> positive(count), negative(count);
    for (std::size_t k = 0; k < count; ++k) {
      positive[k] = std::exp2(x[k] / 4.0);
      negative[k] = -std::abs(x[k]);
    }
    expect_same_bits_in_every_copy(
        [&] {
          std::vector<double> out(6 * count + 1);
          exp_array(x.data(), out.data(), count);
          log_array(positive.data(), out.data() + count, count);
          sqrt_array(positive.data(), out.data() + 2 * count, count);
          exp_with_complement_array(negative.data(), out.data() + 3 * count, out.data() + 4 * count,
                                    count);
          weighted_sum(0.3, x.data(), 0.7, positive.data(), out.data() + 5 * count, count);
          out[6 * count] = max_array(x.data(), count);
          return out;
        },
        "element-wise kernels");
  }
}

// The rescanning greedies' row kernels: durations in both scales (d = 2 takes the direct sum,
// d = 20 the conjugate) and the first minimum of a row with ties and NaN entries.
TEST(SimdCopies, ModeDurationsAndRowMinimaAgree) {
  for (const std::size_t count : {1u, 7u, 8u, 9u, 31u, 100u}) {
    const std::vector<double> x = normal_values(count, 0.0, 10.0, count + 40);
    std::vector<double> eps(count), offset(count), scores(count);
    for (std::size_t k = 0; k < count; ++k) {
      eps[k] = std::exp2(x[k]);
      offset[k] = 0.1 * x[k];
      scores[k] = k % 5 == 3 ? std::nan("") : std::round(x[k]);
    }
    expect_same_bits_in_every_copy(
        [&] {
          std::vector<double> out(4 * count + 2);
          mode_durations(ModeScale::linear, 0.7, 20.0, eps.data(), offset.data(), out.data(),
                         count);
          mode_durations(ModeScale::log, 0.7, 20.0, eps.data(), offset.data(), out.data() + count,
                         count);
          mode_durations(ModeScale::linear, 3e4, 2.0, eps.data(), offset.data(),
                         out.data() + 2 * count, count);
          mode_durations(ModeScale::log, 3e4, 2.0, eps.data(), offset.data(),
                         out.data() + 3 * count, count);
          out[4 * count] = static_cast<double>(
              first_minimum_below(scores.data(), count, std::numeric_limits<double>::infinity()));
          out[4 * count + 1] = static_cast<double>(first_minimum_below(scores.data(), count, 0.5));
          return out;
        },
        "mode durations and row minima");
  }
}

TEST(SimdCopies, MaxProbBoundsAndSearchesAgree) {
  for (const std::size_t count : {1u, 7u, 8u, 9u, 31u, 100u}) {
    const std::vector<double> x = normal_values(count, 0.0, 10.0, count + 50);
    std::vector<double> eps(count), offset(count);
    for (std::size_t k = 0; k < count; ++k) {
      eps[k] = k % 7 == 2 ? 0.0 : std::exp2(x[k]);
      offset[k] = k % 7 == 2 ? 0.0 : 0.1 * x[k];
    }
    expect_same_bits_in_every_copy(
        [&] {
          std::vector<double> out(6 * count + 2);
          maxprob_score_bounds(0.7, 20.0, eps.data(), offset.data(), out.data(), out.data() + count,
                               out.data() + 2 * count, count);
          maxprob_score_bounds(3e4, 2.0, eps.data(), offset.data(), out.data() + 3 * count,
                               out.data() + 4 * count, out.data() + 5 * count, count);
          out[6 * count] = static_cast<double>(first_at_most(x.data(), count, -5.0));
          out[6 * count + 1] = static_cast<double>(first_at_most(x.data(), count, 0.5));
          std::vector<double> with_nan = x;
          with_nan[count / 2] = std::numeric_limits<double>::quiet_NaN();
          out.push_back(static_cast<double>(first_nan(with_nan.data(), count)));
          out.push_back(static_cast<double>(first_nan(x.data(), count)));
          bool has_nan = false;
          out.push_back(static_cast<double>(first_minimum_below(
              with_nan.data(), count, std::numeric_limits<double>::infinity(), has_nan)));
          out.push_back(has_nan ? 1.0 : 0.0);
          return out;
        },
        "MaxProb bounds and searches, first NaN");
  }
}

TEST(SimdCopies, AffineFactorProductsAgree) {
  // One and two blocks of sixteen lanes, a lone block of eight after them; no factor, one, and
  // more than a block of columns.
  for (const std::size_t size : {8u, 16u, 24u, 40u}) {
    for (const std::size_t count : {0u, 1u, 9u, 20u}) {
      const std::vector<double> a = normal_values(size, 0.5, 0.2, size + 3);
      const std::vector<double> b = normal_values(size, 0.5, 0.2, size + 5);
      const std::vector<double> c = normal_values(count, 1.0, 0.7, count + 7);
      expect_same_bits_in_every_copy(
          [&] {
            std::vector<double> product = normal_values(size, 1.0, 0.1, size + 11);
            multiply_affine_factors(product.data(), a.data(), b.data(), size, c.data(), count);
            return product;
          },
          "affine factor products");
    }
  }
}

TEST(SimdCopies, BinaryOverlapsAgree) {
  // A partial block, whole blocks, and whole blocks with a partial one after them.
  for (const std::size_t columns : {3u, 8u, 16u, 20u, 37u}) {
    const std::vector<double> q = normal_values(2 * columns, 0.5, 0.2, columns + 3);
    const std::vector<double> l = normal_values(2 * columns, 1.5, 1.0, columns + 5);
    const std::vector<double> r = normal_values(2 * columns, 1.5, 1.0, columns + 7);
    expect_same_bits_in_every_copy(
        [&] {
          std::vector<double> out(columns);
          binary_overlaps(q.data(), l.data(), r.data(), out.data(), columns);
          return out;
        },
        "binary overlaps");
  }
}

TEST(SimdCopies, BesselTermsAndGigIntegralsAgree) {
  // The batched Bessel terms (inside and outside the fitted range, every batch length's tail)
  // and the GIG kernels whose panels and Laguerre nodes run in the copies.
  const LogBesselKFixedOrder fit(31.0, 0.5, 2000.0, 15.5);
  std::vector<double> arguments;
  for (int k = 0; k < 70; ++k) arguments.push_back(0.1 * std::pow(1.15, k));
  expect_same_bits_in_every_copy(
      [&] {
        std::vector<double> out(arguments.size());
        fit.terms(arguments.data(), out.data(), out.size());
        for (const double chi : {0.5, 20.0, 300.0})
          for (const double r : {0.01, 1.0, 40.0})
            out.push_back(log_gig_upper_integral(-15.0, chi, 2.0, r));
        // Bounds far below the mode, where the Laguerre rule answers (finite, not NaN).
        for (const double laguerre : {log_gig_lower_tail_laguerre(-15.0, 300.0, 1.0, 2.0),
                                      log_gig_lower_tail_laguerre(-3.0, 50.0, 2.0, 0.5)}) {
          EXPECT_TRUE(std::isfinite(laguerre));
          out.push_back(laguerre);
        }
        return out;
      },
      "Bessel terms and GIG integrals");
}

}  // namespace
}  // namespace kingman::kernels
