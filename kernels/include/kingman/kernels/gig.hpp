#pragma once
// The generalized inverse Gaussian (GIG) family in the form the SMC needs (MODEL.md section 5):
// the unnormalized density
//     f(s) = s^{p-1} exp(-(chi/s + psi s)/2),   s > 0,   chi >= 0, psi > 0,
// its complete and incomplete integrals in log space, and exact draws from it truncated to
// s >= r (or s <= r). For a merge of a pair C: p = 1 - d/2, chi = the pair's squared distance
// eps, psi = lambda_m, and s = r_C + 2 delta is GIG truncated to s >= r_C.
//
// Domain: p finite, chi >= 0 finite, psi > 0 finite, bounds >= 0 (std::domain_error
// otherwise). chi = 0 is the gamma case; its integral from 0 is finite only when p > 0 (the
// functions then return +inf, and the samplers throw).
//
// Method (gig.cpp): in u = log s the integrand is exp(phi(u)) with
//     phi(u) = p u - (chi e^{-u} + psi e^{u})/2,
// which is strictly concave. Integrals over [a, b] take the maximum of phi on [a, b] (the mode
// u* = log((p + sqrt(p^2 + chi psi))/psi), clamped), find where phi has dropped by 50 on each
// side by safeguarded Newton (closed-form bounds bracket the roots), and integrate exp(phi - max)
// over that window by adaptive Gauss-Kronrod, with phi(u) - max written through expm1 so that
// it keeps full relative precision however large chi/s or psi s are. When the interval covers
// the whole window, the Bessel formula is used instead. Tested against mpmath
// (tests/data/gig_integral_table.csv) over p in [-499, 1/2], chi in [0, 1e6], psi in [1e-3, 1e7],
// r in [0, 1e4], tails down to e^-300 included: where |log I| < 1e3 the error of log I is
// below 1e-12 absolute, i.e. I itself to 1e-12 relative; beyond, within a few ulps of log I
// (at log I ~ -5e10 one ulp is 7.6e-6: use log_gig_upper_integral_scaled there).
#include <limits>

#include "kingman/kernels/rng.hpp"

namespace kingman::kernels {

// log int_0^inf f(s) ds = log(2 (chi/psi)^{p/2} K_p(sqrt(chi psi))); for chi = 0 the gamma
// limit log Gamma(p) + p log(2/psi) when p > 0, and +inf when p <= 0.
double log_gig_normalizer(double p, double chi, double psi);

// log int_r^inf f(s) ds, r >= 0 (r = 0: the normalizer). -inf only if the tail underflows even
// in log space (it does not in the documented ranges).
double log_gig_upper_integral(double p, double chi, double psi, double r);

// log int_0^r f(s) ds, r >= 0 (r = 0: -inf).
double log_gig_lower_integral(double p, double chi, double psi, double r);

// log int_lower^upper f(s) ds for 0 <= lower <= upper <= +inf.
double log_gig_interval_integral(double p, double chi, double psi, double lower, double upper);

// log( int_r^inf f(s) ds / (r f(r)) ) for r > 0: the upper integral relative to the log-space
// integrand at r, exp(phi(log r)) = r^p exp(-(chi/r + psi r)/2). Free of the large terms psi r/2
// and chi/(2r), so callers that multiply by e^{psi r/2} (MODEL.md: G_C has the factor
// e^{lambda r_C/2}) can cancel them exactly:
//   log I(r) + psi r/2 = p log r - chi/(2r) + log_gig_upper_integral_scaled(p, chi, psi, r).
double log_gig_upper_integral_scaled(double p, double chi, double psi, double r);

// The upper integrals of one kernel (p, chi, psi) above many lower limits r: the parts that do
// not depend on r (the mode, and the normalizer for limits far below it) computed once. SMC
// steps need the same kernel (a pair's eps with the step's lambda) at many r_C: one per state
// that lists the pair. log_scaled(r) is log_gig_upper_integral_scaled(p, chi, psi, r) bit for
// bit; log_normalizer() is log_gig_normalizer(p, chi, psi).
class GigUpperTail {
 public:
  // The parts that do not depend on r: the mode u* and s* = e^{u*} (0 if not a normal number),
  // and the log normalizer. Kept apart, they let a table hold many kernels of one p and psi in
  // 24 bytes each.
  struct Core {
    double mode_log_s = 0.0, mode_s = 0.0, log_normalizer = 0.0;
  };
  static Core core(double p, double chi, double psi);

  GigUpperTail(double p, double chi, double psi) : GigUpperTail(p, chi, psi, core(p, chi, psi)) {}
  // `core` must be core(p, chi, psi).
  GigUpperTail(double p, double chi, double psi, const Core& core)
      : p_(p), chi_(chi), psi_(psi), core_(core) {}
  // `log_r` must be std::log(r) (callers often need it themselves).
  double log_scaled(double r, double log_r) const;
  double log_scaled(double r) const;
  double log_normalizer() const noexcept { return core_.log_normalizer; }

 private:
  double p_, chi_, psi_;
  Core core_;
};

// Exact draws from f restricted to [lower, upper] (0 <= lower < upper <= +inf): rejection
// from a three-piece envelope of the log-concave density of u = log s (flat between the two
// points where phi is 1 below its maximum on the interval, tangent exponential tails outside,
// cut at the interval's ends), so every draw is exact, and strong truncation (r far in a tail)
// costs nothing extra. Measured: at most ~1.5 proposals (3 uniforms each) per draw over the
// tested parameters. Building the envelope costs two short root solves; reuse one sampler for
// many draws with the same parameters.
class TruncatedGigSampler {
 public:
  TruncatedGigSampler(double p, double chi, double psi, double lower,
                      double upper = std::numeric_limits<double>::infinity());
  double operator()(RandomStream& stream) const;
  // log s where the restricted density of u = log s peaks (the envelope's centre).
  double log_mode() const noexcept { return mode_; }
  // Mass of the envelope relative to exp(phi(mode)); divided by the target's mass in the
  // same units (exp(log integral - phi(mode))) it is the expected number of proposals per draw.
  double envelope_mass() const noexcept { return left_mass_ + middle_mass_ + right_mass_; }

 private:
  double log_density_offset(double w) const noexcept;  // phi(mode + w) - phi(mode)

  double p_;
  double chi_scaled_;  // chi e^{-mode}
  double psi_scaled_;  // psi e^{mode}
  double mode_;        // u = log s where phi is largest on [lower, upper]
  double lower_, upper_;
  // In w = u - mode: the envelope is 1 (log 0) on [-left_width_, right_width_], and outside
  // it the tangent of the log density at that end, down to the interval's ends.
  double left_width_, right_width_;
  double left_value_, left_slope_;               // log density at -left_width_ and its slope (> 0)
  double right_value_, right_slope_;             // at right_width_; slope < 0
  double left_fraction_, right_fraction_;        // each tail's mass fraction inside the interval
  double left_mass_, middle_mass_, right_mass_;  // envelope masses, relative to exp(phi(mode))
};

// One draw of s ~ f restricted to s >= r (r = 0: the untruncated GIG).
double sample_truncated_gig(double p, double chi, double psi, double r, RandomStream& stream);

// One draw of s ~ f restricted to 0 < s <= r.
double sample_truncated_gig_below(double p, double chi, double psi, double r, RandomStream& stream);

}  // namespace kingman::kernels
