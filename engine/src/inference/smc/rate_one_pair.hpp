#pragma once
// The rate-1 pair quantities of the Brownian race (race.cpp; MODEL.md section 6): a pair's clock
// law, its mass and the survival factor of a killed pair, as GIG integrals with psi = 1.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <string>

#include "kingman/kernels/gig.hpp"
#include "kingman/kernels/gig_quantile.hpp"
#include "kingman/kernels/gig_quick_sampler.hpp"
#include "kingman/kernels/gig_tail.hpp"
#include "race_engine.hpp"

namespace kingman::detail::race {

// A killed pair's survival correction log(1 + L/U) <= L/U is dropped when L/U < e^-40: the
// log weight moves by less than 1e-17.
constexpr double kLogNegligible = -40.0;
// Where a pair's clock law switches from inversion to rejection (see RateOnePair::cut).
constexpr double kCutSpreads = 4.0;

// The rate-1 quantities of a pair (psi = 1 in the GIG integrals of MODEL.md section 5).
class RateOnePair {
 public:
  RateOnePair(std::size_t dims, double log_det_lambda)
      : shape_(1.0 - 0.5 * static_cast<double>(dims)),
        constant_(-std::log(2.0) -
                  0.5 * static_cast<double>(dims) * std::log(2.0 * std::numbers::pi) -
                  0.5 * log_det_lambda) {}

  double shape() const { return shape_; }

  // The GIG mode (psi = 1): where the density of u = log s peaks. Both forms are computed and
  // one selected (each is the cancellation-free one for its sign of p): no branch, so that the
  // batches below vectorize it.
  double mode(double eps) const { return mode(shape_, eps); }
  // (Static forms with the shape passed, here and below: a batch loop keeps it in a register,
  // where through `this` GCC must reload it after every store and does not vectorize.)
  static double mode(double shape, double eps) {
    const double root = std::sqrt(shape * shape + eps);
    const double above = shape + root, below = eps / (root - shape);
    return shape >= 0.0 ? above : below;
  }

  // 1 / sqrt(-phi''(u*)) at the mode: the spread of log s.
  static double spread(double eps, double mode) {
    return 1.0 / std::sqrt(0.5 * (eps / mode + mode));
  }

  // A pair's clock is tau = created - (s - r)/2 with s from the GIG truncated to s >= r, drawn
  // in two parts split at a cut s_c that depends on the pair alone, four spreads (of log s)
  // below the mode: with the clock's first uniform w and P = P(s < s_c) (exact, from cheap
  // tail integrals), s = F^{-1}(w) by inversion when w < P, else a rejection draw (the quick
  // sampler) from the part beyond s_c with the stream's next uniforms. Both parts are exact
  // and chosen with their exact probabilities, so s is exact; and below s_c, s is monotone in
  // w, which is what certainly_not_after uses. Plain inversion everywhere would do as well but
  // costs ~30 times more than the rejection draw in the bulk, where most drawn clocks are.
  double cut(double eps) const {
    const double mode = this->mode(eps);
    return mode * std::exp(-kCutSpreads * spread(eps, mode));
  }

  // A number b such that the clock with first uniform w is certainly not later than theta
  // when w >= b (b <= 0: whatever w; b >= 1: no w shows it). `mode` is mode(eps). tau > theta needs
  // s < s_theta = r + 2 (created - theta); where s_theta <= s_c that means the inverted part, w <
  // F(s_theta), and F(s_theta) <= L/U (survival_bound).
  double not_after_threshold(double eps, double mode, double offset, double created,
                             double theta) const {
    if (theta >= created) return 0.0;
    const double s_theta = offset + 2.0 * (created - theta);
    const SurvivalBound bound = survival_bound(eps, mode, s_theta);
    // s_theta above the cut, or no bound.
    if (!(bound.log_below_mode <= -kCutSpreads * bound.spread) || !(bound.log_ratio < kInf))
      return 1.0;
    // e^-700 / scale is below any uniform's resolution (2^-53 steps).
    if (bound.log_ratio < -700.0 && bound.scale >= 1e-200) return 0.0;
    return std::exp(bound.log_ratio) / bound.scale;
  }

  // The clock for first uniform w and the rest of its stream.
  template <typename Stream>
  double clock(double eps, double offset, double created, double w, Stream& stream) const {
    const double cut_point = cut(eps);
    double log_beyond = std::nan("");  // log int_r^inf f, computed only when needed
    if (cut_point > offset) {
      log_beyond = kernels::log_gig_mass_beyond(shape_, eps, 1.0, offset);
      const double log_below_cut = log_interval(eps, offset, cut_point);
      if (std::log(w) < log_below_cut - log_beyond) {
        return created - 0.5 * kernels::gig_truncated_quantile_excess(shape_, eps, 1.0, offset, w,
                                                                      log_beyond);
      }
    }
    const double lower = std::max(offset, cut_point);
    const double s = kernels::QuickTruncatedGigSampler(shape_, eps, 1.0, lower)(stream);
    return created - std::max(0.0, 0.5 * (s - offset));
  }

  // log N_C = log int_0^inf e^{-delta} Z_C(r + 2 delta) d delta.
  double log_mass(double eps, double offset) const {
    if (offset > 0.0) {
      return constant_ + shape_ * std::log(offset) - eps / (2.0 * offset) +
             kernels::log_gig_upper_integral_scaled(shape_, eps, 1.0, offset);
    }
    return constant_ + kernels::log_gig_normalizer(shape_, eps, 1.0);
  }

  // log(e^{-delta} / S_C) for a pair killed delta after its creation, when its offset has grown
  // from `offset` to `offset_now` = offset + 2 delta: -delta + log(1 + L/U), L the mass of s
  // in [offset, offset_now] and U beyond.
  // out[k] = log_kill_factor(eps[k], offset[k], offset_now[k], delta[k]) for k < count, the
  // same values: most killed pairs are shown negligible (survival_negligible's first test) by a
  // pass over all of them with log_array's log, which GCC vectorizes, instead of one libm log,
  // two square roots and four divisions in a chain per pair (a third of a race run at
  // n = 2000). That log differs from std::log by a few ulps, so only a pair whose bound clears
  // the threshold by a margin far above that difference is decided here; every other pair
  // takes log_kill_factor, which repeats the exact test. The arrays are overwritten.
  void log_kill_factors(const double* eps, const double* offset, const double* offset_now,
                        const double* delta, std::size_t count, double* out) const;

  double log_kill_factor(double eps, double offset, double offset_now, double delta) const {
    if (!(offset_now > offset)) return 0.0;  // killed when created: S_C = 1
    if (survival_negligible(eps, offset_now)) return -delta;
    // 1 + L/U = I(offset) / I(offset_now), I(r) = int_r^inf f = I - T(r), T(r) = int_0^r f,
    // with I the complete (Bessel) integral and the lower tails T by Gauss-Laguerre far below
    // the mode (1e-10 relative; there T / I < ~1e-3, so the log weight moves by < 1e-12), or
    // by adaptive quadrature.
    const double log_total = kernels::log_gig_normalizer(shape_, eps, 1.0);
    const double log_tail_now = kernels::log_gig_lower_tail_laguerre(shape_, eps, 1.0, offset_now);
    const double log_tail_then =
        offset > 0.0 ? kernels::log_gig_lower_tail_laguerre(shape_, eps, 1.0, offset) : -kInf;
    const double log_upper_then =
        std::isnan(log_tail_then) ? kernels::log_gig_upper_integral(shape_, eps, 1.0, offset)
                                  : log_total + std::log1p(-std::exp(log_tail_then - log_total));
    const double log_upper_now = std::isnan(log_tail_now)
                                     ? kernels::log_gig_upper_integral(shape_, eps, 1.0, offset_now)
                                     : log_total + std::log1p(-std::exp(log_tail_now - log_total));
    return -delta + (log_upper_then - log_upper_now);
  }

 private:
  // log int_a^b f for 0 <= a < b below the mode: the Laguerre lower tails where they apply (the
  // difference only when it loses no precision), else the adaptive integral.
  double log_interval(double eps, double a, double b) const {
    const double tail_b = kernels::log_gig_lower_tail_laguerre(shape_, eps, 1.0, b);
    if (!std::isnan(tail_b)) {
      if (a == 0.0) return tail_b;
      const double tail_a = kernels::log_gig_lower_tail_laguerre(shape_, eps, 1.0, a);
      if (!std::isnan(tail_a) && tail_a < tail_b - 1.0)
        return tail_b + std::log1p(-std::exp(tail_a - tail_b));
    }
    return kernels::log_gig_interval_integral(shape_, eps, 1.0, a, b);
  }

  // An upper bound on log(L/U), L = int_{r}^{s} f, U = int_{s}^inf f, from s alone: the pair
  // (log_ratio, scale) with log(L/U) <= log_ratio - log(scale); log_ratio = +inf where it gives
  // none. In u = log s the integrand e^{phi(u)}, phi(u) = p u - (eps e^-u + e^u)/2, is
  // log-concave. Left of the mode u*, the tangent at log s bounds phi from above, so
  // L <= e^{phi(log s)} / phi'(log s); and U holds at least the stretch [u*, u* + h] where
  // phi >= phi(u* + h) >= p (u* + h) - (eps / mode + mode (1 + h + h^2))/2 (e^-h <= 1 and
  // e^h <= 1 + h + h^2 for h = min(1, 1/sqrt(-phi''(u*)))). One log and one square root.
  struct SurvivalBound {
    double log_ratio;
    double scale;
    double log_below_mode;  // log(s / mode)
    double spread;          // 1/sqrt(-phi''(u*))
  };
  SurvivalBound survival_bound(double eps, double mode, double s) const {
    return survival_bound(shape_, eps, mode, s, spread(eps, mode), std::log(s / mode));
  }
  // The same with the spread and log(s / mode) supplied (log_kill_factors: from log_array).
  static SurvivalBound survival_bound(double shape, double eps, double mode, double s,
                                      double spread, double log_below_mode) {
    const double slope = shape + 0.5 * (eps / s - s);
    const double h = std::min(1.0, spread);
    const double log_ratio = shape * (log_below_mode - h) - 0.5 * (eps / s + s) +
                             0.5 * (eps / mode + mode * (1.0 + h + h * h));
    // No bound where s is not below the mode or the slope is not positive. (Selects, not a
    // branch, so that log_kill_factors' loop vectorizes.)
    const bool none = !(s < mode) | !(slope > 0.0);
    return {none ? kInf : log_ratio, none ? 1.0 : slope * h, log_below_mode, spread};
  }

  // Whether log(L/U) < kLogNegligible by that bound.
  bool survival_negligible(double eps, double offset_now) const {
    const SurvivalBound bound = survival_bound(eps, mode(eps), offset_now);
    if (!(bound.log_ratio < kInf)) return false;
    // Most killed pairs are far in the tail: decide without the second log when the scale
    // cannot matter.
    if (bound.scale >= 1e-6 && bound.log_ratio < kLogNegligible - 14.0) return true;
    return bound.log_ratio - std::log(bound.scale) < kLogNegligible;
  }

  double shape_, constant_;
};

// The Brownian model for the race engine: clusters are ClusterNodes (mean, variance, time).

}  // namespace kingman::detail::race
