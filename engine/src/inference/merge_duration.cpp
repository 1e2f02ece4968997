#include "kingman/inference/merge_duration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kingman {

double log_mode_duration(double lambda, double dims, double eps, double offset) {
  const double shape = 1.0 - 0.5 * dims;
  const double root = std::sqrt(shape * shape + lambda * eps);
  // For shape < 0 the direct sum cancels; multiply by the conjugate instead.
  const double s = shape >= 0.0 ? (shape + root) / lambda : eps / (root - shape);
  return 0.5 * (s - offset);
}

namespace {

// Stationary point of phi(x) = -lambda delta + sum_j [-1/2 log s_j - D_j/(2 s_j)]
//                              + weight * log(s_ref), with s_j = (r_j - r_min) + x,
// x = r_min + 2 delta > 0, s_ref = (mean r - r_min) + x. phi'(x) in units of d/d(delta).
double mode_per_dimension(double lambda, const SharedDimensions& shared, double ref_weight) {
  const std::size_t k = shared.offset.size();
  if (k == 0) return -std::numeric_limits<double>::infinity();
  const double r_min = *std::min_element(shared.offset.begin(), shared.offset.end());
  const double r_mean = std::accumulate(shared.offset.begin(), shared.offset.end(), 0.0) / k;
  const double eps = std::accumulate(shared.squared_delta.begin(), shared.squared_delta.end(), 0.0);
  auto slope = [&](double x) {
    double value = -lambda;
    for (std::size_t j = 0; j < k; ++j) {
      const double s = (shared.offset[j] - r_min) + x;
      value += (shared.squared_delta[j] / s - 1.0) / s;
    }
    value += 2.0 * ref_weight / ((r_mean - r_min) + x);
    return value;
  };
  // Start from the pooled closed form (exact when all r_j are equal).
  const double dims = static_cast<double>(k);
  const double pooled_duration = ref_weight > 0 ? log_mode_duration(lambda, dims, eps, r_mean)
                                                : linear_mode_duration(lambda, dims, eps, r_mean);
  double x0 = r_min + 2.0 * pooled_duration;
  const double tiny = std::max(1e-300, 1e-16 * std::max(r_mean - r_min, 0.0));
  if (!(x0 > tiny)) x0 = std::max(tiny, 1e-3 * std::max(r_mean - r_min, 1e-12));
  double lo = x0, hi = x0;
  if (slope(x0) > 0) {
    do {
      lo = hi;
      hi *= 2.0;
    } while (slope(hi) > 0 && hi < 1e300);
  } else {
    do {
      hi = lo;
      lo *= 0.5;
    } while (slope(lo) <= 0 && lo > tiny);
    if (lo <= tiny) return 0.5 * (tiny - r_min);  // maximum at the boundary
  }
  for (int it = 0; it < 80 && hi > lo * (1.0 + 1e-15); ++it) {
    const double mid = std::sqrt(lo * hi);
    (slope(mid) > 0 ? lo : hi) = mid;
  }
  return 0.5 * (std::sqrt(lo * hi) - r_min);
}

}  // namespace

double linear_mode_duration(double lambda, const SharedDimensions& shared) {
  return mode_per_dimension(lambda, shared, 0.0);
}

double log_mode_duration(double lambda, const SharedDimensions& shared) {
  return mode_per_dimension(lambda, shared, 1.0);
}

}  // namespace kingman
