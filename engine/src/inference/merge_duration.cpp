#include "kingman/inference/merge_duration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "kingman/kernels/offset_sums.hpp"

namespace kingman {

namespace {

// Stationary point of phi(x) = -lambda delta + sum_j [-1/2 log s_j - D_j/(2 s_j)]
//                              + weight * log(s_ref), with s_j = (r_j - r_min) + x,
// x = r_min + 2 delta > 0, s_ref = (mean r - r_min) + x. phi'(x) in units of d/d(delta).
//
// Every pair of data with missing entries comes here (Greedy-Rate1 scores n(n-1)/2 of them), so
// the root is found by Newton steps from the pooled closed form (about four slope evaluations)
// rather than by bisection (~50, which took 84 % of a Greedy-Rate1 run on such data); a
// bracket and safeguarded steps take over where Newton is not safe. With equal offsets the
// closed form is the answer itself. The dimensions' terms run eight per SIMD step
// (kernels::offset_slope).
double mode_per_dimension(double lambda, const ModeSearchInput& input, double ref_weight) {
  const kernels::OffsetSummary& summary = input.summary;
  const std::size_t k = summary.count;
  if (k == 0) return -std::numeric_limits<double>::infinity();
  const double r_min = summary.least;
  const double r_mean = summary.sum / static_cast<double>(k);
  const double eps = summary.squared_distance;
  const double dims = static_cast<double>(k);
  // The pooled closed form: exact when all r_j are equal (then phi is the isotropic one).
  const double pooled_duration = ref_weight > 0 ? log_mode_duration(lambda, dims, eps, r_mean)
                                                : linear_mode_duration(lambda, dims, eps, r_mean);
  if (summary.greatest == r_min) return pooled_duration;
  const double* offsets = input.offset.data();
  const double* squared_deltas = input.squared_delta.data();
  const std::size_t padded = input.entries;
  // phi'(x), and with `curvature` its derivative phi''(x).
  auto slope = [&](double x, double* curvature) {
    const kernels::OffsetSlope sums =
        kernels::offset_slope(offsets, squared_deltas, padded, r_min, x);
    const double inverse_ref = 1.0 / ((r_mean - r_min) + x);
    const double value = (sums.value - lambda) + 2.0 * ref_weight * inverse_ref;
    if (curvature) *curvature = sums.change - 2.0 * ref_weight * inverse_ref * inverse_ref;
    return value;
  };
  double x0 = r_min + 2.0 * pooled_duration;
  const double tiny = std::max(1e-300, 1e-16 * std::max(r_mean - r_min, 0.0));
  if (!(x0 > tiny)) x0 = std::max(tiny, 1e-3 * std::max(r_mean - r_min, 1e-12));
  // Plain Newton from the pooled start, where phi is concave (phi'' < 0) along the way: the
  // usual case, about four slope evaluations.
  const kernels::OffsetNewton newton_start = kernels::offset_newton(
      offsets, squared_deltas, padded, r_min, {lambda, ref_weight, r_mean - r_min}, x0, tiny);
  if (newton_start.converged) return 0.5 * (newton_start.x - r_min);
  // A Newton step that moves x by at most this relative amount has converged: phi' is then at
  // the level of its rounding noise, where steps only wander by ulps.
  constexpr double kConverged = 0x1p-52;
  double lo = 0.0, hi = 0.0;
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
    for (std::size_t j = 0; j < padded; ++j) {  // padding: gap +inf, no term
      const double gap = offsets[j] - r_min;
      if (gap == 0.0) {
        d0 += squared_deltas[j];
        c0 += 1.0;
      } else {
        bound += squared_deltas[j] / (gap * gap);
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
  double x = upward ? lo : hi;
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

// Pads the first `count` entries to whole blocks: offset +inf and Delta^2 = 0 make both of the
// slope kernel's terms exact zeros.
void pad_to_blocks(ModeSearchInput& out) {
  const std::size_t count = out.summary.count;
  out.entries = kernels::padded_size(count);
  if (out.offset.size() < out.entries) {
    out.offset.resize(out.entries);
    out.squared_delta.resize(out.entries);
  }
  for (std::size_t j = count; j < out.entries; ++j) {
    out.offset[j] = std::numeric_limits<double>::infinity();
    out.squared_delta[j] = 0.0;
  }
}

}  // namespace

void gather_mode_search_input(BrownianClusterView l, BrownianClusterView r, std::size_t d,
                              double current_time, ModeSearchInput& out) {
  const std::size_t padded = kernels::padded_size(d);
  if (out.offset.size() < padded) {
    out.offset.resize(padded);
    out.squared_delta.resize(padded);
  }
  const double dt = (l.time - current_time) + (r.time - current_time);
  kernels::gather_offsets(l.mean, l.variance, r.mean, r.variance, d, dt, out.offset.data(),
                          out.squared_delta.data(), out.summary);
  out.entries = padded;
  const kernels::OffsetSummary& summary = out.summary;
  if (summary.greatest > summary.least && kernels::padded_size(summary.count) < padded) {
    // The search will run (the offsets differ), and over fewer blocks without the dimensions
    // one cluster lacks: the shared ones move to the front, in their order.
    double* offsets = out.offset.data();
    double* squared_deltas = out.squared_delta.data();
    std::size_t k = 0;
    for (std::size_t j = 0; j < d; ++j) {
      const double offset = offsets[j], squared = squared_deltas[j];
      offsets[k] = offset;
      squared_deltas[k] = squared;
      k += offset < std::numeric_limits<double>::infinity() ? 1 : 0;
    }
    pad_to_blocks(out);
  }
}

void gather_mode_search_input(const SharedDimensions& shared, ModeSearchInput& out) {
  const std::size_t k = shared.offset.size();
  kernels::OffsetSummary& summary = out.summary;
  summary.count = k;
  out.offset.assign(shared.offset.begin(), shared.offset.end());
  out.squared_delta.assign(shared.squared_delta.begin(), shared.squared_delta.end());
  if (k > 0) {
    const auto [low, high] = std::minmax_element(shared.offset.begin(), shared.offset.end());
    summary.least = *low;
    summary.greatest = *high;
  }
  summary.sum = std::accumulate(shared.offset.begin(), shared.offset.end(), 0.0);
  summary.squared_distance =
      std::accumulate(shared.squared_delta.begin(), shared.squared_delta.end(), 0.0);
  pad_to_blocks(out);
}

double linear_mode_duration(double lambda, const ModeSearchInput& input) {
  return mode_per_dimension(lambda, input, 0.0);
}

double log_mode_duration(double lambda, const ModeSearchInput& input) {
  return mode_per_dimension(lambda, input, 1.0);
}

double linear_mode_duration(double lambda, const SharedDimensions& shared) {
  thread_local ModeSearchInput input;
  gather_mode_search_input(shared, input);
  return mode_per_dimension(lambda, input, 0.0);
}

double log_mode_duration(double lambda, const SharedDimensions& shared) {
  thread_local ModeSearchInput input;
  gather_mode_search_input(shared, input);
  return mode_per_dimension(lambda, input, 1.0);
}

}  // namespace kingman
