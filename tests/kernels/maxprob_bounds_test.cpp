// Greedy-MaxProb's score bounds (maxprob_bounds.hpp) and the search for the pairs they leave
// (first_at_most, vector_math.hpp): the durations are mode_durations' bits; every bounded score,
// computed exactly as the engine does, lies within its bounds, which are narrow enough to rule
// out nearly every pair; the approximate log is as close as the bounds assume; pairs that cannot
// be bounded get infinite bounds; and the search finds what a scan finds.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "kingman/kernels/maxprob_bounds.hpp"
#include "kingman/kernels/mode_durations.hpp"
#include "kingman/kernels/vector_math.hpp"

namespace kingman::kernels {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::uint64_t bits(double x) {
  return std::bit_cast<std::uint64_t>(x);
}

// The engine's exact score (maxprob_pair_score: lambda delta - log_local_likelihood), written
// out here with libm's log.
double exact_score(double lambda, double dims, double eps, double offset, double duration) {
  const double s = offset + 2.0 * duration;
  const double log_likelihood =
      -0.5 * dims * (std::log(2.0 * std::numbers::pi) + std::log(s)) - eps / (2.0 * s);
  return lambda * duration - log_likelihood;
}

struct Row {
  std::vector<double> eps, offset, durations, lower, upper;
  explicit Row(std::size_t count)
      : eps(count), offset(count), durations(count), lower(count), upper(count) {}
  void bound(double lambda, double dims) {
    maxprob_score_bounds(lambda, dims, eps.data(), offset.data(), durations.data(), lower.data(),
                         upper.data(), eps.size());
  }
};

// Distances over many binades, offsets of both signs and sizes (so that s spans binades and
// the duration clamps or not), dimensions and rates far apart; rows of every tail length.
TEST(MaxProbBounds, BracketTheExactScoreNarrowly) {
  std::mt19937_64 engine(71);
  std::uniform_real_distribution<double> exponent(-30.0, 30.0), spread(-1.0, 1.0);
  std::size_t bounded = 0;
  for (const double dims : {1.0, 2.0, 20.0, 64.0, 784.0}) {
    for (const double lambda : {1e-6, 1.0, 4950.0, 1e9}) {
      for (const std::size_t count : {1u, 7u, 8u, 13u, 64u, 301u}) {
        Row row(count);
        for (std::size_t k = 0; k < count; ++k) {
          row.eps[k] = std::exp2(exponent(engine));
          row.offset[k] = std::exp2(exponent(engine)) * (spread(engine) > -0.8 ? 1.0 : -1e-3);
        }
        row.bound(lambda, dims);
        for (std::size_t k = 0; k < count; ++k) {
          const double duration =
              std::max(linear_mode_duration(lambda, dims, row.eps[k], row.offset[k]), 0.0);
          ASSERT_EQ(bits(row.durations[k]), bits(duration)) << "entry " << k;
          const double score = exact_score(lambda, dims, row.eps[k], row.offset[k], duration);
          if (row.lower[k] == -kInf) {
            ASSERT_EQ(row.upper[k], kInf);
            continue;
          }
          ++bounded;
          ASSERT_TRUE(std::isfinite(score));
          EXPECT_LE(row.lower[k], score) << "d " << dims << ", lambda " << lambda << ", k " << k;
          EXPECT_GE(row.upper[k], score) << "d " << dims << ", lambda " << lambda << ", k " << k;
          // Narrow: a few times the margin, 1e-6 of the terms' magnitudes.
          const double terms =
              lambda * duration +
              0.5 * dims * (1.84 + std::abs(std::log(row.offset[k] + 2.0 * duration))) +
              row.eps[k] / (2.0 * (row.offset[k] + 2.0 * duration));
          EXPECT_LE(row.upper[k] - row.lower[k], 2.5e-6 * terms) << "k " << k;
        }
      }
    }
  }
  EXPECT_GT(bounded, 7000u);  // of 7 880 pairs
}

// The approximate log within kMaxProbLogError of libm's: the midpoint of the bounds is the
// approximate score, and where the log term dominates (eps 0, lambda 0) its error is the log's
// times d / 2. s sweeps mantissas across [1, 2) and exponents from 2^-1000 to 2^1000.
TEST(MaxProbBounds, TheApproximateLogIsWithinItsError) {
  const double dims = 2.0;  // the score is log(2 pi) + log s + 0
  double worst = 0.0;
  for (int e = -1000; e <= 1000; e += 37) {
    constexpr std::size_t kCount = 4096;
    Row row(kCount);
    for (std::size_t k = 0; k < kCount; ++k) {
      row.eps[k] = 0.0;
      row.offset[k] = std::ldexp(1.0 + static_cast<double>(k) / kCount, e);
    }
    row.bound(0.0, dims);
    for (std::size_t k = 0; k < kCount; ++k) {
      ASSERT_GT(row.upper[k], row.lower[k]);
      const double approximate = 0.5 * (row.lower[k] + row.upper[k]);
      const double log_s = std::log(row.offset[k]);
      const double error = std::abs(approximate - (std::log(2.0 * std::numbers::pi) + log_s));
      // Beyond the log's own error: rounding of terms up to ~700 (1e-13).
      worst = std::max(worst, error);
      ASSERT_LE(error, kMaxProbLogError + 1e-15 * (2.0 + std::abs(log_s)))
          << "s = " << row.offset[k];
    }
  }
  std::printf("approximate log: worst error %.3g\n", worst);
}

// s = 0 (identical points, no leaf variance), s < 0, s subnormal or infinite, NaN or infinite
// distances: no bounds, so the engine scores those pairs exactly.
TEST(MaxProbBounds, PairsWithoutFiniteApproximationsHaveNoBounds) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double subnormal = std::numeric_limits<double>::denorm_min() * 8.0;
  const std::vector<std::pair<double, double>> cases = {{0.0, 0.0},  {0.0, -1.0}, {0.0, subnormal},
                                                        {0.0, kInf}, {nan, 1.0},  {kInf, 1.0},
                                                        {1.0, nan},  {0.0, -0.0}};
  for (const double lambda : {1.0, 1e300}) {
    Row row(cases.size() + 1);
    for (std::size_t k = 0; k < cases.size(); ++k) {
      row.eps[k] = cases[k].first;
      row.offset[k] = cases[k].second;
    }
    row.eps.back() = 1.0;  // one ordinary pair beside them
    row.offset.back() = 1.0;
    row.bound(lambda, 3.0);
    for (std::size_t k = 0; k < cases.size(); ++k) {
      EXPECT_EQ(row.lower[k], -kInf) << "case " << k;
      EXPECT_EQ(row.upper[k], kInf) << "case " << k;
    }
    // Its duration clamps to 0 at either rate, so its score is finite and bounded.
    EXPECT_TRUE(std::isfinite(row.lower.back()));
    EXPECT_TRUE(std::isfinite(row.upper.back()));
  }
}

std::size_t scanned_at_most(const std::vector<double>& x, double bound) {
  for (std::size_t k = 0; k < x.size(); ++k)
    if (x[k] <= bound) return k;
  return x.size();
}

TEST(FirstAtMost, FindsWhatAScanFinds) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::mt19937_64 engine(43);
  std::uniform_int_distribution<int> pick(0, 30);
  for (std::size_t count = 0; count <= 40; ++count) {
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<double> x(count);
      for (double& v : x) {
        const int p = pick(engine);
        v = p == 0 ? nan : p == 1 ? kInf : p == 2 ? -kInf : p == 3 ? -0.0 : static_cast<double>(p);
      }
      for (const double bound : {kInf, 4.0, 0.0, -1.0, -kInf, nan}) {
        ASSERT_EQ(first_at_most(x.data(), count, bound), scanned_at_most(x, bound))
            << "count " << count << ", trial " << trial << ", bound " << bound;
      }
    }
  }
}

}  // namespace
}  // namespace kingman::kernels
