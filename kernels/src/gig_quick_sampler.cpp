#include "kingman/kernels/gig_quick_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "number_text.hpp"

namespace kingman::kernels {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// The envelope's flat piece ends where phi is about this far below its maximum; any end point
// gives an exact sampler, this one the fewest proposals (~1.35 for a normal density).
constexpr double kDrop = 1.0;
constexpr double kDropTolerance = 0.25;

// phi(mode + w) - phi(mode) = p w - (a expm1(-w) + b expm1(w)) / 2 (a = chi / mode,
// b = psi mode) and its slope, from the same two expm1 calls.
struct Offset {
  double p, a, b;
  double value(double w) const noexcept {
    double v = p * w - 0.5 * b * std::expm1(w);
    if (a > 0.0) v -= 0.5 * a * std::expm1(-w);
    return v;
  }
  void value_and_slope(double w, double& value, double& slope) const noexcept {
    const double up = std::expm1(w);
    const double down = a > 0.0 ? std::expm1(-w) : 0.0;
    value = p * w - 0.5 * (a * down + b * up);
    slope = p + 0.5 * (a * (1.0 + down) - b * (1.0 + up));
  }
};

// The smallest root bound of e^t - 1 - t >= y (y > 0): t <= sqrt(2y) and t <= 2 + log1p(y).
double exponential_root_bound(double y) {
  const double quadratic = std::sqrt(2.0 * y);
  return quadratic <= 2.0 ? quadratic : std::min(quadratic, 2.0 + std::log1p(y));
}

struct DropPoint {
  double distance;  // t > 0 from the mode
  double value;     // the offset there
  double slope;     // its derivative in w
  bool at_limit;    // the domain ended before phi dropped by kDrop
};

// A point t > 0 along `direction` from the mode (phi's maximum on this side) near where phi has
// dropped by kDrop, or `limit` (the distance to the domain's end) when phi has not dropped that
// far there. Closed-form bounds on the root (each term of the offset bounds the drop from
// below), a start from the local quadratic, and a few safeguarded Newton steps: the point only
// needs to be near the root.
DropPoint drop_point(const Offset& f, int direction, double limit) {
  const double sign = direction;
  const double descent = std::max(0.0, -sign * (f.p + 0.5 * (f.a - f.b)));
  const double curvature = 0.5 * (f.a + f.b);
  // The term that grows exponentially on this side, the one that grows linearly, and p's.
  const double steep = direction > 0 ? f.b : f.a;
  const double shallow = direction > 0 ? f.a : f.b;
  double high = kInfinity;
  if (descent > 0.0) high = std::min(high, kDrop / descent);
  if (steep > 0.0) high = std::min(high, exponential_root_bound(2.0 * kDrop / steep));
  if (shallow > 0.0) high = std::min(high, 1.0 + 2.0 * kDrop / shallow);
  if (sign * f.p < 0.0) high = std::min(high, (kDrop + 0.5 * shallow) / std::fabs(f.p));
  double value, slope;
  if (limit <= high) {
    f.value_and_slope(sign * limit, value, slope);
    if (value >= -kDrop) return {limit, value, slope, true};
    high = limit;
  }
  double low = 0.0;
  double t = std::min(
      high, 2.0 * kDrop / (descent + std::sqrt(descent * descent + 2.0 * kDrop * curvature)));
  for (int iteration = 0;; ++iteration) {
    f.value_and_slope(sign * t, value, slope);
    const double excess = value + kDrop;  // decreasing in t
    if (std::fabs(excess) <= kDropTolerance || iteration == 6) break;
    if (excess > 0.0) {
      low = t;
    } else {
      high = t;
    }
    double next = t - excess / (sign * slope);
    if (!(next > low && next < high)) next = std::isfinite(high) ? 0.5 * (low + high) : 2.0 * t;
    t = next;
  }
  return {t, value, slope, false};
}

}  // namespace

QuickTruncatedGigSampler::QuickTruncatedGigSampler(double p, double chi, double psi, double lower)
    : p_(p), lower_(lower) {
  if (!std::isfinite(p) || !(chi >= 0.0) || !std::isfinite(chi) || !(psi > 0.0) ||
      !std::isfinite(psi) || !(lower >= 0.0) || !std::isfinite(lower)) {
    throw std::domain_error(
        "QuickTruncatedGigSampler: need finite p, chi >= 0, psi > 0 and "
        "lower >= 0 (got p = " +
        detail::number_text(p) + ", chi = " + detail::number_text(chi) +
        ", psi = " + detail::number_text(psi) + ", lower = " + detail::number_text(lower) + ")");
  }
  // The GIG mode, the root of psi s^2 - 2 p s - chi = 0, without cancellation for either sign
  // of p; 0 when chi = 0 and p <= 0.
  const double root = std::sqrt(p * p + chi * psi);
  const double free_mode = p >= 0.0 ? (p + root) / psi : chi / (root - p);
  if (!(free_mode > 0.0) && lower == 0.0) {
    throw std::domain_error(
        "QuickTruncatedGigSampler: chi = 0 with p <= 0 is improper near "
        "s = 0 (p = " +
        detail::number_text(p) + ")");
  }
  const bool at_lower = !(free_mode > lower);
  mode_ = at_lower ? lower : free_mode;
  chi_scaled_ = chi / mode_;
  psi_scaled_ = psi * mode_;
  const Offset f{p, chi_scaled_, psi_scaled_};

  // Right: the flat piece, then a tangent exponential tail to infinity.
  const DropPoint right = drop_point(f, +1, kInfinity);
  right_width_ = right.distance;
  right_value_ = right.value;
  right_slope_ = right.slope;
  right_mass_ = std::exp(right_value_) / -right_slope_;

  // Left: nothing when the mode is the bound; else the flat piece, cut at the bound, and a
  // tangent tail down to the bound (or to s = 0).
  left_width_ = 0.0;
  left_value_ = left_slope_ = left_fraction_ = left_mass_ = 0.0;
  if (!at_lower) {
    const double room = lower > 0.0 ? std::log(mode_ / lower) : kInfinity;
    const DropPoint left = drop_point(f, -1, room);
    left_width_ = left.distance;
    if (!left.at_limit) {
      left_value_ = left.value;
      left_slope_ = left.slope;
      const double length = room - left_width_;
      left_fraction_ = std::isinf(length) ? 1.0 : -std::expm1(-left_slope_ * length);
      left_mass_ = std::exp(left_value_) * left_fraction_ / left_slope_;
    }
  }
  middle_mass_ = left_width_ + right_width_;
  if (!(right_slope_ < 0.0) || (left_mass_ > 0.0 && !(left_slope_ > 0.0)) ||
      !std::isfinite(envelope_mass())) {
    throw std::domain_error(
        "QuickTruncatedGigSampler: no envelope for p = " + detail::number_text(p) +
        ", chi = " + detail::number_text(chi) + ", psi = " + detail::number_text(psi) +
        ", lower = " + detail::number_text(lower));
  }
}

double QuickTruncatedGigSampler::log_mode() const noexcept {
  return std::log(mode_);
}

}  // namespace kingman::kernels
