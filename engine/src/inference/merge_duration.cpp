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
//
// Every pair of data with missing entries comes here (Greedy-Rate1 scores n(n-1)/2 of them), so
// the root is found by Newton steps from the pooled closed form (about four slope evaluations)
// rather than by bisection (~50, which took 84 % of a Greedy-Rate1 run on such data); a
// bracket and safeguarded steps take over where Newton is not safe. With equal offsets the
// closed form is the answer itself.
double mode_per_dimension(double lambda, const SharedDimensions& shared, double ref_weight) {
  const std::size_t k = shared.offset.size();
  if (k == 0) return -std::numeric_limits<double>::infinity();
  const auto [low_offset, high_offset] =
      std::minmax_element(shared.offset.begin(), shared.offset.end());
  const double r_min = *low_offset;
  const double r_mean = std::accumulate(shared.offset.begin(), shared.offset.end(), 0.0) / k;
  const double eps = std::accumulate(shared.squared_delta.begin(), shared.squared_delta.end(), 0.0);
  const double dims = static_cast<double>(k);
  // The pooled closed form: exact when all r_j are equal (then phi is the isotropic one).
  const double pooled_duration = ref_weight > 0 ? log_mode_duration(lambda, dims, eps, r_mean)
                                                : linear_mode_duration(lambda, dims, eps, r_mean);
  if (*high_offset == r_min) return pooled_duration;
  // phi'(x), and with `curvature` its derivative phi''(x).
  auto slope = [&](double x, double* curvature) {
    double value = -lambda, change = 0.0;
    for (std::size_t j = 0; j < k; ++j) {
      const double s = (shared.offset[j] - r_min) + x;
      const double inverse = 1.0 / s;
      value += (shared.squared_delta[j] * inverse - 1.0) * inverse;
      change += (1.0 - 2.0 * shared.squared_delta[j] * inverse) * inverse * inverse;
    }
    const double inverse_ref = 1.0 / ((r_mean - r_min) + x);
    value += 2.0 * ref_weight * inverse_ref;
    change -= 2.0 * ref_weight * inverse_ref * inverse_ref;
    if (curvature) *curvature = change;
    return value;
  };
  double x0 = r_min + 2.0 * pooled_duration;
  const double tiny = std::max(1e-300, 1e-16 * std::max(r_mean - r_min, 0.0));
  if (!(x0 > tiny)) x0 = std::max(tiny, 1e-3 * std::max(r_mean - r_min, 1e-12));
  // A Newton step that moves x by at most this relative amount has converged: phi' is then at
  // the level of its rounding noise, where steps only wander by ulps.
  constexpr double kConverged = 0x1p-52;
  // Plain Newton from the pooled start, where phi is concave (phi'' < 0) along the way: the
  // usual case, about four slope evaluations. Signs seen bound the root on both sides.
  double lo = 0.0, hi = std::numeric_limits<double>::infinity();
  // One Newton step from x: phi' narrows [lo, hi] by its sign, phi'' gives the next point.
  struct Step {
    double next, curvature;
    bool converged;
  };
  auto newton = [&](double x) {
    double curvature = 0.0;
    const double value = slope(x, &curvature);
    (value > 0 ? lo : hi) = x;
    const double next = x - value / curvature;
    return Step{next, curvature, std::fabs(next - x) <= kConverged * x};
  };
  double x = x0;
  for (int iteration = 0; iteration < 8; ++iteration) {
    const Step step = newton(x);
    if (!(step.curvature < 0.0)) break;
    if (step.converged) return 0.5 * (std::clamp(step.next, lo, hi) - r_min);
    if (!(step.next > lo && step.next < hi && step.next > tiny)) break;
    x = step.next;
  }
  // Otherwise bracket a root with phi' > 0 at lo and <= 0 at hi (a local maximum between) by
  // doubling or halving from the start, then Newton steps kept inside the bracket, with
  // bisection in log x as the fallback.
  lo = hi = x0;
  const bool upward = slope(x0, nullptr) > 0;
  if (upward) {
    do {
      lo = hi;
      hi *= 2.0;
    } while (slope(hi, nullptr) > 0 && hi < 1e300);
  } else {
    // Where the dimensions at the smallest offset (J0, c0 of them) have D_j = 0, phi' <= -lambda
    // - c0 / x + B for every x, with B bounding the other terms (D_j / s_j^2 <= D_j / gap_j^2,
    // and 2 w / s_ref <= 2 w / (mean r - r_min)): below c0 / (B - lambda) phi' stays negative,
    // so the maximum is at the boundary and halving further (up to a thousand times, to 1e-300,
    // as for duplicate rows) cannot find a root.
    double d0 = 0.0, c0 = 0.0, bound = 2.0 * ref_weight / (r_mean - r_min);
    for (std::size_t j = 0; j < k; ++j) {
      const double gap = shared.offset[j] - r_min;
      if (gap == 0.0) {
        d0 += shared.squared_delta[j];
        c0 += 1.0;
      } else {
        bound += shared.squared_delta[j] / (gap * gap);
      }
    }
    const double negative_below = d0 > 0.0         ? 0.0
                                  : bound > lambda ? c0 / (bound - lambda)
                                                   : std::numeric_limits<double>::infinity();
    bool rising = false;
    do {
      if (lo <= negative_below) return 0.5 * (tiny - r_min);  // maximum at the boundary
      hi = lo;
      lo *= 0.5;
      rising = slope(lo, nullptr) > 0;
    } while (!rising && lo > tiny);
    if (!rising) return 0.5 * (tiny - r_min);
  }
  x = upward ? lo : hi;
  for (int iteration = 0; iteration < 200 && hi > lo * (1.0 + kConverged); ++iteration) {
    const Step step = newton(x);
    if (step.converged) {
      x = std::clamp(step.next, lo, hi);
      break;
    }
    x = step.next > lo && step.next < hi ? step.next : std::sqrt(lo * hi);
  }
  return 0.5 * (x - r_min);
}

}  // namespace

double linear_mode_duration(double lambda, const SharedDimensions& shared) {
  return mode_per_dimension(lambda, shared, 0.0);
}

double log_mode_duration(double lambda, const SharedDimensions& shared) {
  return mode_per_dimension(lambda, shared, 1.0);
}

}  // namespace kingman
