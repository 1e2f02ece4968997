// The rescanning greedies' row kernels (mode_durations.hpp, vector_math.hpp): every duration of a
// row is the one-pair form's bits, in both scales, wherever it sits in the row and in place; the
// one-pair forms are the modes they claim to be; and a row's first minimum below a bound is the
// one a plain scan keeps, with ties, NaN entries, signed zeros and infinities.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kingman/kernels/mode_durations.hpp"
#include "kingman/kernels/vector_math.hpp"

namespace kingman::kernels {
namespace {

std::uint64_t bits(double x) {
  return std::bit_cast<std::uint64_t>(x);
}

double one_pair(ModeScale scale, double lambda, double dims, double eps, double offset) {
  return scale == ModeScale::linear ? linear_mode_duration(lambda, dims, eps, offset)
                                    : log_mode_duration(lambda, dims, eps, offset);
}

// Distances over many binades (and zero), offsets of both signs; dimensions on both sides of
// d = 2, where the log-scale form switches to its conjugate; rates from tiny to huge.
TEST(ModeDurations, EveryEntryIsTheOnePairFormBitForBit) {
  std::mt19937_64 engine(31);
  std::uniform_real_distribution<double> exponent(-40.0, 40.0), spread(-3.0, 3.0);
  for (const ModeScale scale : {ModeScale::linear, ModeScale::log}) {
    for (const double dims : {1.0, 2.0, 3.0, 20.0, 64.0}) {
      for (const double lambda : {1e-6, 0.5, 1.0, 4950.0, 1e12}) {
        for (const std::size_t count : {0u, 1u, 5u, 8u, 13u, 64u, 257u}) {
          std::vector<double> eps(count), offset(count), out(count);
          for (std::size_t k = 0; k < count; ++k) {
            eps[k] = k == 2 ? 0.0 : std::exp2(exponent(engine));
            offset[k] = spread(engine) * std::exp2(exponent(engine) / 4.0);
          }
          mode_durations(scale, lambda, dims, eps.data(), offset.data(), out.data(), count);
          for (std::size_t k = 0; k < count; ++k) {
            ASSERT_EQ(bits(out[k]), bits(one_pair(scale, lambda, dims, eps[k], offset[k])))
                << "d " << dims << ", lambda " << lambda << ", entry " << k << " of " << count;
          }
          std::vector<double> in_place = eps;
          mode_durations(scale, lambda, dims, in_place.data(), offset.data(), in_place.data(),
                         count);
          for (std::size_t k = 0; k < count; ++k) ASSERT_EQ(bits(in_place[k]), bits(out[k]));
        }
      }
    }
  }
}

// The forms are the modes: at s = r + 2 delta* the derivative of log g (linear scale), or of
// log g + log s (log scale), in s vanishes: -lambda/2 - d/(2 s) + eps/(2 s^2) (+ 1/s).
TEST(ModeDurations, TheDurationsAreStationaryPoints) {
  for (const double dims : {1.0, 2.0, 5.0, 20.0}) {
    for (const double lambda : {0.01, 1.0, 300.0}) {
      for (const double eps : {1e-3, 0.7, 50.0}) {
        const double offset = 0.3;
        for (const ModeScale scale : {ModeScale::linear, ModeScale::log}) {
          const double s = offset + 2.0 * one_pair(scale, lambda, dims, eps, offset);
          ASSERT_GT(s, 0.0);
          double slope = -0.5 * lambda - 0.5 * dims / s + 0.5 * eps / (s * s);
          if (scale == ModeScale::log) slope += 1.0 / s;
          const double scale_of_terms = 0.5 * lambda + 0.5 * dims / s + 0.5 * eps / (s * s);
          EXPECT_LT(std::abs(slope), 1e-12 * scale_of_terms)
              << "d " << dims << ", lambda " << lambda << ", eps " << eps;
        }
      }
    }
  }
}

// What a scan keeping the first of equal minima below `bound` finds (count if none).
std::size_t scanned_minimum(const std::vector<double>& x, double bound) {
  std::size_t found = x.size();
  double least = bound;
  for (std::size_t k = 0; k < x.size(); ++k) {
    if (x[k] < least) {
      least = x[k];
      found = k;
    }
  }
  return found;
}

TEST(FirstMinimumBelow, FindsWhatAScanKeeps) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::mt19937_64 engine(37);
  std::uniform_int_distribution<int> pick(0, 9);
  for (std::size_t count = 0; count <= 40; ++count) {
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<double> x(count);
      for (double& v : x) {
        const int p = pick(engine);
        v = p == 0 ? nan : p == 1 ? inf : p == 2 ? -0.0 : p == 3 ? 0.0 : static_cast<double>(p);
      }
      const bool any_nan = std::any_of(x.begin(), x.end(), [](double v) { return std::isnan(v); });
      for (const double bound : {inf, 4.0, 0.0, -1.0, nan}) {
        ASSERT_EQ(first_minimum_below(x.data(), count, bound), scanned_minimum(x, bound))
            << "count " << count << ", trial " << trial << ", bound " << bound;
        // The overload that also reports NaN entries: the same index, and whether any is NaN.
        bool has_nan = !any_nan;
        ASSERT_EQ(first_minimum_below(x.data(), count, bound, has_nan), scanned_minimum(x, bound));
        ASSERT_EQ(has_nan, any_nan) << "count " << count << ", trial " << trial;
      }
    }
  }
  // Ties keep the first; -0 and +0 tie.
  const std::vector<double> ties = {3.0, 1.0, 2.0, 1.0, 0.0, -0.0, 5.0, 0.0, 9.0};
  EXPECT_EQ(first_minimum_below(ties.data(), ties.size(), inf), 4u);
  const std::vector<double> all_nan(17, nan);
  EXPECT_EQ(first_minimum_below(all_nan.data(), all_nan.size(), inf), all_nan.size());
}

TEST(FirstNan, FindsTheFirstNaNOrNone) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::mt19937_64 engine(41);
  for (std::size_t count = 0; count <= 40; ++count) {
    for (int trial = 0; trial < 100; ++trial) {
      std::vector<double> x(count);
      for (double& v : x) v = static_cast<double>(engine() % 7) - 3.0;
      // None, one, or two NaN (quiet or signalling, either sign), among +-inf.
      const std::size_t nans = engine() % 3;
      std::size_t expected = count;
      for (std::size_t k = 0; k < nans && count > 0; ++k) {
        const std::size_t at = engine() % count;
        x[at] = k == 0 ? -nan : std::numeric_limits<double>::signaling_NaN();
        expected = std::min(expected, at);
      }
      if (count > 0) x[engine() % count] = expected == count ? inf : x[expected];
      std::size_t scanned = count;
      for (std::size_t k = 0; k < count && scanned == count; ++k)
        if (std::isnan(x[k])) scanned = k;
      ASSERT_EQ(first_nan(x.data(), count), scanned) << "count " << count << ", trial " << trial;
    }
  }
  const std::vector<double> no_nan = {inf, -inf, 0.0, -0.0, 1e308, 5e-324, 2.0, 3.0, 4.0};
  EXPECT_EQ(first_nan(no_nan.data(), no_nan.size()), no_nan.size());
}

}  // namespace
}  // namespace kingman::kernels
