// The one-rate optimal merge time of the binary / multinomial model (discrete_merge_time.cpp)
// against the root of the objective's slope found by bisection in long double, to within the
// root's own conditioning: over leaf pairs (overlap 0 where the leaves disagree, so that Z = 0
// at the boundary), agreeing columns (overlap 1 / q > 1), clusters, columns that say nothing
// (overlap 1), rates from Greedy-Rate1's 1 to MinDuration's coalescent rates of large m, and
// mutation rates over a factor 400.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kingman/inference/discrete_merge_time.hpp"
#include "kingman/model/discrete_messages.hpp"

namespace kingman {
namespace {

using Long = long double;

struct Reference {
  Long time;      // the optimum
  double scale;   // the size of its rounding error per unit roundoff in the evaluation of g
  bool interior;  // below the boundary
};

// In y = lambda (2t - t_l - t_r) <= y_max: g = sum_d A_d x / Z^d - beta with x = e^y,
// Z^d = (1 - x) + x S_d, A_d = 1 - S_d and beta = rate / 2 lambda, is increasing where it
// crosses 0 (it is convex in x and negative at x = 0). Bisection in y, with 1 - x from expm1,
// so that optima close to the boundary keep their relative precision.
Reference reference_optimum(const std::vector<double>& overlaps, double lambda, double rate,
                            double time_l, double time_r) {
  const Long beta = static_cast<Long>(rate) / (2.0L * lambda);
  const Long latest = std::min(time_l, time_r);
  const Long sum = static_cast<Long>(time_l) + time_r;
  const Long y_max = static_cast<Long>(lambda) * (2.0L * latest - sum);
  auto g = [&](Long y) {
    const Long x = std::exp(y), u = -std::expm1(y);
    Long h = 0.0L;
    for (double s : overlaps) {
      const Long z = u + x * s;
      if (!(z > 0.0L)) return std::numeric_limits<Long>::infinity();
      h += (1.0L - s) * x / z;
    }
    return h - beta;
  };
  if (!(g(y_max) > 0.0L)) return {latest, 0.0, false};
  Long lo = y_max - 1.0L, hi = y_max;
  while (!(g(lo) < 0.0L)) lo = y_max - 2.0L * (y_max - lo);
  for (int i = 0; i < 400; ++i) {
    const Long mid = 0.5L * (lo + hi);
    if (!(mid > lo && mid < hi)) break;
    (g(mid) < 0.0L ? lo : hi) = mid;
  }
  const Long y = 0.5L * (lo + hi);
  // d g / d y and the size of g's terms: an error e in g moves y by e / (that slope).
  const Long x = std::exp(y), u = -std::expm1(y);
  Long slope = 0.0L, size = beta;
  for (double s : overlaps) {
    const Long z = u + x * s;
    slope += (1.0L - s) * x / (z * z);
    size += std::abs((1.0L - s) * x / z);
  }
  const Long time = std::min(latest, 0.5L * (y / lambda + sum));
  const double scale = static_cast<double>(0.5L * (size / slope) / lambda + std::abs(time) +
                                           std::abs(sum) + std::abs(y / lambda));
  return {time, scale, time < latest};
}

TEST(DiscreteMergeTime, OneRateOptimumIsTheSlopesRootToRounding) {
  std::mt19937_64 engine(11);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const std::size_t widths[] = {1, 2, 3, 5, 10, 20, 40, 100};
  int interior = 0, boundary = 0;
  double worst = 0.0;
  for (int trial = 0; trial < 6000; ++trial) {
    const std::size_t d = widths[engine() % std::size(widths)];
    std::vector<double> overlaps(d);
    const bool leaves = trial % 3 == 0;
    for (double& s : overlaps) {
      const double kind = unit(engine);
      if (kind < 0.25) {
        s = 0.0;  // disagreeing leaves
      } else if (kind < 0.55) {
        s = 1.0 / (0.05 + 0.9 * unit(engine));  // agreeing leaves, 1 / q
      } else if (kind < 0.65) {
        s = 1.0;  // a column that cannot tell
      } else {
        s = leaves ? 0.0 : 3.0 * unit(engine);  // clusters' messages
      }
    }
    const double lambda = std::exp(std::log(0.05) + std::log(400.0) * unit(engine));
    const std::vector<double> rates(d, lambda);
    const double m = std::floor(2.0 + 2000.0 * unit(engine) * unit(engine));
    const double rate = trial % 2 == 0 ? 1.0 : 0.5 * m * (m - 1.0);
    const double time_l = leaves ? 0.0 : -std::exp(-6.0 + 8.0 * unit(engine));
    const double time_r =
        leaves || unit(engine) < 0.2 ? time_l : -std::exp(-6.0 + 8.0 * unit(engine));
    const DiscretePair pair(overlaps, rates, time_l, time_r);
    const double t = optimal_merge_time(pair, rate);
    const Reference reference = reference_optimum(overlaps, lambda, rate, time_l, time_r);
    (reference.interior ? interior : boundary)++;
    const double error = std::abs(static_cast<double>(t - reference.time));
    const double tolerance = 32.0 * std::numeric_limits<double>::epsilon() * reference.scale;
    ASSERT_LE(error, tolerance) << "trial " << trial << " d " << d << " lambda " << lambda
                                << " rate " << rate << " t " << t << " reference "
                                << static_cast<double>(reference.time);
    if (reference.scale > 0.0)
      worst = std::max(worst, error / (std::numeric_limits<double>::epsilon() * reference.scale));
  }
  EXPECT_GT(interior, 3000);
  EXPECT_GT(boundary, 100);
  RecordProperty("worst_error_in_units_of_roundoff", std::to_string(worst));
}

}  // namespace
}  // namespace kingman
