#pragma once
// A cheaper-to-build exact sampler of the GIG density f(s) = s^{p-1} exp(-(chi/s + psi s)/2)
// restricted to s >= lower (gig.hpp has the family and the reference TruncatedGigSampler).
// The race (MODEL.md section 6) builds one sampler per pair clock and draws from it once, so
// the set-up dominates; here it is closed-form.
//
// Method: the same three-piece rejection envelope as TruncatedGigSampler on u = log s, where
// the log density phi is strictly concave: flat at phi's maximum on [mode - left, mode + right],
// and beyond the tangent exponentials at those two points. Any two points give a valid envelope
// (concavity puts the tangents above phi), so every draw is exact whatever the points; the
// reference solves for the points where phi is 1 below its maximum, this one takes them from the
// local quadratic, |phi'| w + |phi''| w^2 / 2 = 1 (in practice 1.3 to 1.5 proposals per draw,
// tests/kernels/gig_quick_sampler_test.cpp).
#include <algorithm>
#include <cmath>
#include <limits>

namespace kingman::kernels {

class QuickTruncatedGigSampler {
 public:
  // Domain: p finite, chi >= 0, psi > 0, lower >= 0, all finite, and not (chi = 0, p <= 0 and
  // lower = 0) where f is not integrable; std::domain_error otherwise.
  QuickTruncatedGigSampler(double p, double chi, double psi, double lower);

  // One draw; `stream` is anything with a uniform() on (0, 1), e.g. a RandomStream.
  template <typename Stream>
  double operator()(Stream& stream) const;

  // log s at the envelope's centre (phi's maximum on [lower, inf)).
  double log_mode() const noexcept;
  // Mass of the envelope relative to exp(phi(log_mode())): divided by the target's mass in
  // the same units it is the expected number of proposals per draw.
  double envelope_mass() const noexcept { return left_mass_ + middle_mass_ + right_mass_; }

 private:
  // phi(log mode + w) - phi(log mode), through expm1 so that it keeps its relative precision
  // near w = 0 however large chi / mode or psi mode are.
  double offset(double w) const noexcept {
    double value = p_ * w - 0.5 * psi_scaled_ * std::expm1(w);
    if (chi_scaled_ > 0.0) value -= 0.5 * chi_scaled_ * std::expm1(-w);
    return value;
  }

  double p_;
  double chi_scaled_;  // chi / mode
  double psi_scaled_;  // psi * mode
  double mode_;        // s where phi is largest on [lower, inf)
  double lower_;
  double left_width_, right_width_;   // the flat piece, around log mode
  double left_value_, left_slope_;    // the tangent at -left_width_ (slope > 0)
  double right_value_, right_slope_;  // the tangent at right_width_ (slope < 0)
  double left_fraction_;              // the left tail's mass fraction inside the domain
  double left_mass_, middle_mass_, right_mass_;
};

template <typename Stream>
double QuickTruncatedGigSampler::operator()(Stream& stream) const {
  const double total = left_mass_ + middle_mass_ + right_mass_;
  for (;;) {
    const double piece = stream.uniform() * total;
    const double position = stream.uniform();
    double w, log_envelope;
    if (piece < middle_mass_) {
      w = -left_width_ + position * middle_mass_;
      log_envelope = 0.0;
    } else if (piece < middle_mass_ + right_mass_) {
      const double excess = std::log(position) / right_slope_;  // Exp(-right_slope_)
      w = right_width_ + excess;
      log_envelope = right_value_ + right_slope_ * excess;
    } else {
      const double excess = -std::log1p(-position * left_fraction_) / left_slope_;
      w = -left_width_ - excess;
      log_envelope = left_value_ - left_slope_ * excess;
    }
    if (std::log(stream.uniform()) <= offset(w) - log_envelope) {
      return std::max(lower_, mode_ * std::exp(w));
    }
  }
}

}  // namespace kingman::kernels
