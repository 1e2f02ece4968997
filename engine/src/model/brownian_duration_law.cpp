#include "brownian_duration_law.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <numeric>
#include <string>

#include "kingman/error.hpp"
#include "kingman/kernels/gig.hpp"
#include "kingman/kernels/vector_math.hpp"

namespace kingman {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// The mode only places the first panels: a relative precision of 1e-6 is plenty.
constexpr double kModeTolerance = 1e-6;
constexpr int kMaxModeSteps = 400;

// One group's log factor -(k/2) log s - E / (2 s), with its limits at s = 0.
double log_factor(double s, double dims, double energy) {
  if (s > 0.0) return -0.5 * dims * std::log(s) - energy / (2.0 * s);
  return energy > 0.0 ? -kInf : kInf;
}

[[noreturn]] void throw_not_integrable(double dims) {
  throw NumericalError(
      "merge-duration law: two clusters of zero variance agree on " +
      std::to_string(static_cast<long long>(dims)) +
      " dimensions, so their merge density (2 delta)^(-k/2) is not integrable at 0; use a "
      "leaf variance > 0");
}

}  // namespace

bool has_one_offset(const SharedDimensions& shared) {
  return std::adjacent_find(shared.offset.begin(), shared.offset.end(), std::not_equal_to<>()) ==
         shared.offset.end();
}

double log_mass_upper_bound(double dims, double energy, double smallest_offset,
                            double largest_offset, double rate) {
  constexpr double kTheta = 0.9;
  if (!(smallest_offset > 0.0) || !std::isfinite(largest_offset)) return kInf;
  const double reduced = energy * (smallest_offset / largest_offset);  // E'
  const double slope = kTheta * rate;
  // The positive root of slope u^2 + K u - E' = 0, without cancellation; at least r_min.
  const double root = 2.0 * reduced / (dims + std::sqrt(dims * dims + 4.0 * slope * reduced));
  const double u = std::max(root, smallest_offset);
  return -std::log((1.0 - kTheta) * rate) - 0.5 * slope * (u - smallest_offset) -
         0.5 * dims * std::log(u) - reduced / (2.0 * u);
}

double log_lower_share_upper_bound(double dims, double energy, double smallest_offset,
                                   double largest_offset, double rate, double delta0) {
  if (!(smallest_offset > 0.0) || !std::isfinite(largest_offset) || !(delta0 > 0.0)) return kInf;
  const double r = smallest_offset;
  const double log_ratio = std::log(largest_offset / smallest_offset);
  // The positive root u of rate u^2 + dims u - e = 0, where a log integrand's slope in delta,
  // -rate - dims / u + e / u^2, vanishes; 0 for e = 0.
  auto peak = [&](double e) { return 2.0 * e / (dims + std::sqrt(dims * dims + 4.0 * rate * e)); };
  auto log_upper = [&](double u) {
    return -0.5 * rate * (u - r) - 0.5 * dims * std::log(u) -
           energy * (r / largest_offset) / (2.0 * u);
  };
  auto log_lower = [&](double delta) {
    const double u = r + 2.0 * delta;
    return -rate * delta - 0.5 * dims * (std::log(u) + log_ratio) - energy / (2.0 * u);
  };
  // The upper integrand's largest value on [0, delta0].
  const double u_top = std::clamp(peak(energy * (r / largest_offset)), r, r + 2.0 * delta0);
  const double log_below = std::log(delta0) + log_upper(u_top);
  // The lower integrand's peak and curvature: slope and its derivative in delta.
  const double mode = std::max(0.0, 0.5 * (peak(energy) - r));
  const double u = r + 2.0 * mode;
  const double slope = -rate - dims / u + energy / (u * u);
  const double curvature = (2.0 * dims - 4.0 * energy / u) / (u * u);
  double half_width = mode > 0.0 ? 1.0 / std::sqrt(std::max(-curvature, 1e-300))
                                 : 1.0 / (std::abs(slope) + std::sqrt(std::abs(curvature)));
  if (!(half_width > 0.0) || !std::isfinite(half_width)) return kInf;
  const double a = std::max(0.0, mode - half_width), b = mode + half_width;
  const double log_mass_below = std::log(b - a) + std::min(log_lower(a), log_lower(b));
  return log_below - log_mass_below + std::numbers::ln2;
}

double log_mass_upper_bound(const SharedDimensions& shared, double rate) {
  const std::size_t dims = shared.offset.size();
  if (dims == 0) return -std::log(rate);
  double energy = 0.0, constant = 0.0;
  double smallest = kInf, largest = 0.0;
  for (std::size_t j = 0; j < dims; ++j) {
    energy += shared.squared_delta[j];
    constant -= 0.5 * (std::log(2.0 * std::numbers::pi) + shared.log_lambda[j]);
    smallest = std::min(smallest, shared.offset[j]);
    largest = std::max(largest, shared.offset[j]);
  }
  return constant +
         log_mass_upper_bound(static_cast<double>(dims), energy, smallest, largest, rate);
}

double single_offset_log_mass(const SharedDimensions& shared, double rate) {
  const std::size_t dims = shared.offset.size();
  if (dims == 0) return -std::log(rate);
  const double r = shared.offset.front();
  double energy = 0.0, log_lambda = 0.0;
  for (std::size_t j = 0; j < dims; ++j) {
    if (shared.offset[j] != r) return std::numeric_limits<double>::quiet_NaN();
    energy += shared.squared_delta[j];
    log_lambda += shared.log_lambda[j];
  }
  const double k = static_cast<double>(dims), p = 1.0 - 0.5 * k;
  if (r == 0.0 && energy == 0.0 && k >= 2.0) throw_not_integrable(k);
  const double head =
      -std::log(2.0) - 0.5 * k * std::log(2.0 * std::numbers::pi) - 0.5 * log_lambda;
  if (r == 0.0) return head + kernels::log_gig_normalizer(p, energy, rate);
  return head + p * std::log(r) - energy / (2.0 * r) +
         kernels::log_gig_upper_integral_scaled(p, energy, rate, r);
}

void BrownianDurationLaw::assign(const SharedDimensions& shared, double rate, double start_time) {
  if (!(rate > 0.0) || !std::isfinite(rate)) {
    throw OptionError("merge-duration law: the rate must be finite and > 0, got " +
                      std::to_string(rate));
  }
  lambda_ = rate;
  groups_.clear();
  const std::size_t dims = shared.offset.size();
  constant_ = 0.0;
  thread_local std::vector<std::size_t> order;
  order.resize(dims);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return shared.offset[a] < shared.offset[b]; });
  const double log_two_pi = std::log(2.0 * std::numbers::pi);
  for (const std::size_t j : order) {
    const double r = shared.offset[j], e = shared.squared_delta[j];
    if (!(r >= 0.0) || !std::isfinite(r) || !(e >= 0.0) || !std::isfinite(e)) {
      throw OptionError(
          "merge-duration law: dimension offsets and squared differences must be "
          "finite and >= 0, got r = " +
          std::to_string(r) + ", Delta^2 = " + std::to_string(e));
    }
    constant_ -= 0.5 * (log_two_pi + shared.log_lambda[j]);
    if (!groups_.empty() && groups_.back().offset == r) {
      groups_.back().dims += 1.0;
      groups_.back().energy += e;
    } else {
      groups_.push_back({r, 1.0, e});
    }
  }
  if (groups_.empty()) {
    set_exponential(rate, start_time);  // no shared dimension: Z = 1
    return;
  }
  for (const Group& g : groups_)
    if (g.offset == 0.0 && g.energy == 0.0 && g.dims >= 2.0) throw_not_integrable(g.dims);
  // Anchor and width of the first panels (header): the mode and the curvature there, or at 0
  // the scale of the slope, at most 1 / lambda. (At an interior mode the curvature alone: capped
  // at 1 / lambda there too, PostPost's first panels on data with missing entries were often
  // several times narrower than the peak, 13.7 panels per law against 10.8.)
  double h0 = 0.0, dh0 = 0.0;
  slope(0.0, h0, dh0);
  double anchor = 0.0, width = 1.0 / rate;
  if (h0 > 0.0) {
    anchor = mode_inside();
    double h = 0.0, dh = 0.0;
    slope(anchor, h, dh);
    if (dh < 0.0 && std::isfinite(dh)) width = 1.0 / std::sqrt(-dh);
  } else if (std::isfinite(h0)) {
    const double scale = std::max(-h0, std::sqrt(std::max(-dh0, 0.0)));
    if (scale > 0.0 && std::isfinite(scale)) width = 1.0 / scale;
    width = std::min(width, 1.0 / rate);
  }
  integrate(rate, start_time, width, anchor);
}

double BrownianDurationLaw::log_density(double delta) const {
  double log_f = constant_ - lambda_ * delta;
  for (const Group& g : groups_) log_f += log_factor(g.offset + 2.0 * delta, g.dims, g.energy);
  return log_f;
}

void BrownianDurationLaw::log_density_batch(const double* deltas, double* out,
                                            std::size_t count) const {
  thread_local std::vector<double> offsets, logs;
  offsets.resize(count);
  logs.resize(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = constant_ - lambda_ * deltas[i];
  for (const Group& g : groups_) {
    for (std::size_t i = 0; i < count; ++i) offsets[i] = g.offset + 2.0 * deltas[i];
    // log_array takes positive normal numbers: s = 0 (or subnormal, a few panels next to a
    // zero offset) goes the scalar way.
    if (*std::min_element(offsets.begin(), offsets.end()) < std::numeric_limits<double>::min()) {
      for (std::size_t i = 0; i < count; ++i) out[i] = log_density(deltas[i]);
      return;
    }
    kernels::log_array(offsets.data(), logs.data(), count);
    for (std::size_t i = 0; i < count; ++i)
      out[i] += -0.5 * g.dims * logs[i] - g.energy / (2.0 * offsets[i]);
  }
}

double BrownianDurationLaw::log_tail_bound(double length) const {
  double log_bound = constant_ - lambda_ * length - std::log(lambda_);
  for (const Group& g : groups_) {
    const double s = std::max(g.offset + 2.0 * length, g.energy / g.dims);
    log_bound += log_factor(s, g.dims, g.energy);
  }
  return log_bound;
}

void BrownianDurationLaw::slope(double delta, double& h, double& dh) const {
  h = -lambda_;
  dh = 0.0;
  for (const Group& g : groups_) {
    const double s = g.offset + 2.0 * delta;
    if (!(s > 0.0)) {
      h += g.energy > 0.0 ? kInf : -kInf;
      dh = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    const double inverse = 1.0 / s;
    h += (g.energy * inverse - g.dims) * inverse;
    dh += (2.0 * g.dims - 4.0 * g.energy * inverse) * inverse * inverse;
  }
}

double BrownianDurationLaw::mode_inside() const {
  // h < -lambda + sum E_g / (2 delta)^2, negative beyond delta = sqrt(sum E / lambda) / 2.
  double energy = 0.0;
  for (const Group& g : groups_) energy += g.energy;
  double lo = 0.0, hi = 0.5 * std::sqrt(energy / lambda_) * (1.0 + 1e-9) + 1e-300;
  double h = 0.0, dh = 0.0;
  for (int k = 0; k < 64; ++k, hi *= 2.0) {
    slope(hi, h, dh);
    if (h < 0.0) break;
  }
  double delta = hi;
  for (int step = 0; step < kMaxModeSteps; ++step) {
    slope(delta, h, dh);
    if (h > 0.0) {
      lo = delta;
    } else {
      hi = delta;
    }
    if (hi - lo <= kModeTolerance * hi) break;
    double next = delta - h / dh;
    if (!(next > lo && next < hi)) {
      // Bisect, in scale while the bracket spans orders of magnitude.
      next = lo == 0.0 ? hi / 1024.0 : (hi > 4.0 * lo ? std::sqrt(lo * hi) : 0.5 * (lo + hi));
    }
    if (std::abs(next - delta) <= kModeTolerance * delta) return next;
    delta = next;
  }
  return 0.5 * (lo + hi);
}

}  // namespace kingman
