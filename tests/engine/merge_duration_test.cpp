// The merge-duration modes of pairs whose dimensions carry their own offsets (missing entries,
// merge_duration.hpp): against a long-double bisection written here, on pairs drawn to cover
// offsets and squared distances over many scales, both weights (linear and log-scale modes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kingman/inference/merge_duration.hpp"

namespace kingman {
namespace {

// d phi / d delta at x = r_min + 2 delta in long double (MODEL.md section 4; weight 1 adds the
// log-scale Jacobian log s_ref with s_ref = mean r + 2 delta), its derivative in x, and the sum
// of its terms' magnitudes (what a double evaluation's rounding is relative to).
struct Slope {
  long double value, change, magnitude;
};

Slope slope_at(const SharedDimensions& shared, double lambda, double weight, long double x) {
  const long double r_min = *std::min_element(shared.offset.begin(), shared.offset.end());
  long double r_mean = 0.0L;
  for (double r : shared.offset) r_mean += r;
  r_mean /= static_cast<long double>(shared.offset.size());
  Slope out{-lambda, 0.0L, lambda};
  for (std::size_t j = 0; j < shared.offset.size(); ++j) {
    const long double s = (shared.offset[j] - r_min) + x;
    out.value += (shared.squared_delta[j] / s - 1.0L) / s;
    out.change += (1.0L - 2.0L * shared.squared_delta[j] / s) / (s * s);
    out.magnitude += (shared.squared_delta[j] / s + 1.0L) / s;
  }
  const long double s_ref = (r_mean - r_min) + x;
  out.value += 2.0L * weight / s_ref;
  out.change -= 2.0L * weight / (s_ref * s_ref);
  out.magnitude += 2.0L * weight / s_ref;
  return out;
}

long double slope(const SharedDimensions& shared, double lambda, double weight, long double x) {
  return slope_at(shared, lambda, weight, x).value;
}

// The reference: the local maximum nearest the pooled closed form in its ascent direction,
// bracketed by doubling and bisected in long double to full precision.
double reference_x(const SharedDimensions& shared, double lambda, double weight, double start) {
  long double lo = start, hi = start;
  if (slope(shared, lambda, weight, start) > 0) {
    do {
      lo = hi;
      hi *= 2.0L;
    } while (slope(shared, lambda, weight, hi) > 0);
  } else {
    do {
      hi = lo;
      lo *= 0.5L;
    } while (slope(shared, lambda, weight, lo) <= 0 && lo > 1e-300L);
  }
  for (int i = 0; i < 200; ++i) {
    const long double mid = 0.5L * (lo + hi);
    (slope(shared, lambda, weight, mid) > 0 ? lo : hi) = mid;
  }
  return static_cast<double>(0.5L * (lo + hi));
}

SharedDimensions draw_pair(std::mt19937_64& engine) {
  std::uniform_int_distribution<int> dims(1, 12), scale(-3, 3);
  std::uniform_real_distribution<double> unit(0.05, 1.0);
  SharedDimensions shared;
  const int k = dims(engine);
  const double base = std::pow(10.0, scale(engine));
  for (int j = 0; j < k; ++j) {
    // Offsets within a few factors of each other (as leaf and cluster variances are); squared
    // distances from 0 (a duplicate coordinate) to well beyond the offsets.
    shared.offset.push_back(base * (0.2 + 3.0 * unit(engine)));
    const double distance =
        engine() % 6 == 0 ? 0.0 : base * std::pow(10.0, scale(engine)) * unit(engine);
    shared.squared_delta.push_back(distance);
    shared.log_lambda.push_back(0.0);
  }
  return shared;
}

// Holds `duration`, the mode found for `shared` at (lambda, weight), to the long-double
// bisection; counts the case in `boundary` or `compared`.
void expect_reference_mode(const SharedDimensions& shared, double lambda, double weight,
                           double duration, const std::string& context, std::size_t& boundary,
                           std::size_t& compared) {
  const double r_min = *std::min_element(shared.offset.begin(), shared.offset.end());
  const double r_mean =
      std::accumulate(shared.offset.begin(), shared.offset.end(), 0.0) / shared.offset.size();
  const double eps = std::accumulate(shared.squared_delta.begin(), shared.squared_delta.end(), 0.0);
  const double dims = static_cast<double>(shared.offset.size());
  const double pooled = weight > 0 ? log_mode_duration(lambda, dims, eps, r_mean)
                                   : linear_mode_duration(lambda, dims, eps, r_mean);
  double start = r_min + 2.0 * pooled;
  if (!(start > 1e-300)) start = std::max(1e-300, 1e-3 * std::max(r_mean - r_min, 1e-12));
  const double expected = reference_x(shared, lambda, weight, start);
  const double x = r_min + 2.0 * duration;
  if (expected < 1e-200) {  // the maximum is at the boundary x -> 0
    EXPECT_LT(x, 1e-200 + 1e-15 * r_min) << context;
    ++boundary;
    return;
  }
  // A double evaluation of phi' is off by ~k ulps of its terms' magnitudes, which moves its
  // root by that over |phi''| (ill-conditioned where phi is flat: small lambda, weight 1);
  // x is r_min + 2 delta, so it carries the rounding of r_min as well.
  const Slope at = slope_at(shared, lambda, weight, expected);
  const double noise = static_cast<double>(16.0L * (shared.offset.size() + 2) * 0x1p-52L *
                                           at.magnitude / std::fabs(at.change));
  EXPECT_NEAR(x, expected, noise + 1e-15 * (expected + r_min))
      << context << " weight " << weight << " k " << shared.offset.size() << " lambda " << lambda
      << " r " << ::testing::PrintToString(shared.offset) << " D "
      << ::testing::PrintToString(shared.squared_delta) << " start " << start;
  ++compared;
}

TEST(MergeDuration, PerDimensionModesMatchALongDoubleBisection) {
  std::mt19937_64 engine(7);
  std::size_t boundary = 0, compared = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const SharedDimensions shared = draw_pair(engine);
    const double lambda = std::pow(10.0, static_cast<double>(static_cast<int>(engine() % 7)) - 3.0);
    for (const double weight : {0.0, 1.0}) {
      const double duration =
          weight > 0 ? log_mode_duration(lambda, shared) : linear_mode_duration(lambda, shared);
      expect_reference_mode(shared, lambda, weight, duration, "trial " + std::to_string(trial),
                            boundary, compared);
    }
  }
  // Both kinds of case occurred.
  EXPECT_GT(compared, 6000u);
  EXPECT_GT(boundary, 0u);
}

// The same modes from two clusters' messages (gather_mode_search_input, the SIMD gather that
// Greedy-Rate1 uses): dimensions either cluster lacks (variance +inf, mean arbitrary) take no
// part, and the mode matches the bisection on the dimensions both observe.
TEST(MergeDuration, ModesFromClusterViewsMatchALongDoubleBisection) {
  std::mt19937_64 engine(8);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::size_t boundary = 0, compared = 0, none_shared = 0;
  ModeSearchInput input;
  for (int trial = 0; trial < 3000; ++trial) {
    const std::size_t d = 1 + engine() % 23;
    // The pair's shared dimensions, scattered among dimensions one of them lacks.
    const SharedDimensions drawn = draw_pair(engine);
    // Rows padded as BrownianMessages pads them (variance +inf after d).
    std::vector<double> lm(kernels::padded_size(d), 0.0), rm(kernels::padded_size(d), 0.0);
    std::vector<double> lv(kernels::padded_size(d), std::numeric_limits<double>::infinity());
    std::vector<double> rv = lv;
    SharedDimensions shared;
    std::size_t next = 0;
    const double dt = 0.1 * drawn.offset[0] * unit(engine);
    for (std::size_t j = 0; j < d; ++j) {
      if (next < drawn.offset.size() && unit(engine) < 0.8) {
        // Split r_j - dt between the two variances, and D_j between the means.
        const double variances = std::max(0.0, drawn.offset[next] - dt);
        lv[j] = variances * unit(engine);
        rv[j] = variances - lv[j];
        lm[j] = unit(engine);
        rm[j] = lm[j] + std::sqrt(drawn.squared_delta[next]);
        shared.offset.push_back((lv[j] + rv[j]) + dt);
        shared.squared_delta.push_back((lm[j] - rm[j]) * (lm[j] - rm[j]));
        shared.log_lambda.push_back(0.0);
        ++next;
      } else {
        lv[j] = std::numeric_limits<double>::infinity();
        rv[j] = unit(engine);
        lm[j] = std::numeric_limits<double>::quiet_NaN();
        rm[j] = unit(engine);
      }
    }
    const BrownianClusterView left{lm.data(), lv.data(), 0.5 * dt};
    const BrownianClusterView right{rm.data(), rv.data(), 0.5 * dt};
    gather_mode_search_input(left, right, d, 0.0, input);
    ASSERT_EQ(input.summary.count, shared.offset.size()) << "trial " << trial;
    const double lambda = std::pow(10.0, static_cast<double>(static_cast<int>(engine() % 7)) - 3.0);
    for (const double weight : {0.0, 1.0}) {
      const double duration =
          weight > 0 ? log_mode_duration(lambda, input) : linear_mode_duration(lambda, input);
      if (shared.offset.empty()) {
        EXPECT_EQ(duration, -std::numeric_limits<double>::infinity()) << "trial " << trial;
        ++none_shared;
        continue;
      }
      expect_reference_mode(shared, lambda, weight, duration, "trial " + std::to_string(trial),
                            boundary, compared);
    }
  }
  EXPECT_GT(compared, 4000u);
  EXPECT_GT(boundary, 0u);
  EXPECT_GT(none_shared, 0u);
}

// Equal offsets: the pooled closed form is the exact mode, returned as it is.
TEST(MergeDuration, EqualOffsetsGiveTheClosedForm) {
  SharedDimensions shared;
  shared.offset = {0.3, 0.3, 0.3};
  shared.squared_delta = {0.5, 0.0, 2.0};
  shared.log_lambda = {0.0, 0.0, 0.0};
  EXPECT_EQ(linear_mode_duration(2.0, shared), linear_mode_duration(2.0, 3.0, 2.5, 0.3));
  EXPECT_EQ(log_mode_duration(2.0, shared), log_mode_duration(2.0, 3.0, 2.5, 0.3));
  EXPECT_EQ(linear_mode_duration(2.0, SharedDimensions{}),
            -std::numeric_limits<double>::infinity());
}

// Duplicate coordinates (every D_j = 0) with unequal offsets: the linear-scale density falls
// from x = 0 on, so the mode is at the boundary, found in a few dozen slope evaluations (the
// bracket widens by squaring factors; the old halving took ~1000).
TEST(MergeDuration, DuplicateCoordinatesPutTheModeAtTheBoundary) {
  SharedDimensions shared;
  shared.offset = {0.2, 0.5, 0.9};
  shared.squared_delta = {0.0, 0.0, 0.0};
  shared.log_lambda = {0.0, 0.0, 0.0};
  const double x = 0.2 + 2.0 * linear_mode_duration(1.0, shared);
  EXPECT_LT(std::abs(x), 1e-16);
}

}  // namespace
}  // namespace kingman
