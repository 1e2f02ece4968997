// Inversion of the truncated GIG distribution function: against closed forms (the exponential
// case chi = 0, p = 1, and the inverse Gaussian p = -1/2, whose distribution function is a sum
// of two normal terms), and as a round trip through the interval integrals over the parameters
// the race meets (psi = 1, d = 1 to 256, bounds from 0 to far in either tail), including
// monotonicity in the uniform, which the race's skip test relies on.
#include "kingman/kernels/gig_quantile.hpp"

#include <gtest/gtest.h>

#include <boost/math/quadrature/gauss.hpp>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "kingman/kernels/gig.hpp"

namespace {

using namespace kingman::kernels;

const std::vector<double> kUniforms = {1e-15,     1e-9, 1e-4, 0.01,     0.2,      0.5,
                                       0.5000001, 0.8,  0.99, 1 - 1e-6, 1 - 1e-12};

TEST(GigQuantile, ExponentialCaseMatchesClosedForm) {
  // chi = 0, p = 1: f = e^{-psi s / 2}, so s = lower - (2 / psi) log(1 - w).
  for (double psi : {0.01, 1.0, 37.0}) {
    for (double lower : {0.0, 0.3, 50.0}) {
      for (double w : kUniforms) {
        const double expected = -2.0 / psi * std::log1p(-w);
        const double excess = gig_truncated_quantile_excess(
            1.0, 0.0, psi, lower, w, log_gig_upper_integral(1.0, 0.0, psi, lower));
        // Within 1e-11, or what s = lower + excess can resolve.
        const double resolution =
            2.0 * (std::nextafter(lower + expected, 1e300) - lower - expected);
        EXPECT_NEAR(excess, expected, 1e-11 * expected + std::fabs(resolution))
            << "psi " << psi << " lower " << lower << " w " << w;
      }
    }
  }
}

// The inverse Gaussian IG(mu, l): density proportional to s^{-3/2} e^{-l (s - mu)^2 / (2 mu^2 s)},
// i.e. p = -1/2, chi = l, psi = l / mu^2, with distribution function
// Phi(sqrt(l/s)(s/mu - 1)) + e^{2 l / mu} Phi(-sqrt(l/s)(s/mu + 1)).
double inverse_gaussian_upper(double s, double mu, double l) {
  // 1 - CDF, written with erfc so that the far tail keeps its precision.
  const double a = std::sqrt(l / s);
  const double upper = 0.5 * std::erfc((s / mu - 1.0) * a / std::sqrt(2.0));
  const double second =
      std::exp(2.0 * l / mu) * 0.5 * std::erfc((s / mu + 1.0) * a / std::sqrt(2.0));
  return upper - second;
}

TEST(GigQuantile, InverseGaussianMatchesClosedForm) {
  const double mu = 1.5, l = 2.0;
  for (double lower : {0.0, 0.4, 3.0}) {
    const double mass_beyond_lower = lower > 0.0 ? inverse_gaussian_upper(lower, mu, l) : 1.0;
    for (double w : {1e-6, 0.01, 0.3, 0.5, 0.7, 0.99, 1 - 1e-6}) {
      const double s = gig_truncated_quantile(-0.5, l, l / (mu * mu), lower, w);
      const double fraction_below = 1.0 - inverse_gaussian_upper(s, mu, l) / mass_beyond_lower;
      EXPECT_NEAR(fraction_below, w, 1e-9 * std::fmin(w, 1.0 - w) + 1e-13)
          << "lower " << lower << " w " << w;
    }
  }
}

// log int_lower^s f: gig.hpp's interval integral, or, for intervals narrow against the
// density's spread (which it resolves only to ~1e-7), a 30-point Gauss-Legendre rule in long
// double split in 8 panels.
double reference_log_interval(double p, double chi, double psi, double lower, double s) {
  auto log_f = [&](long double x) { return (p - 1.0L) * std::log(x) - 0.5L * (chi / x + psi * x); };
  const long double width = static_cast<long double>(s) - lower;
  const long double slope = std::fabs(
      (p - 1.0L) / lower + 0.5L * chi / (static_cast<long double>(lower) * lower) - 0.5L * psi);
  if (lower > 0.0 && width <= 0.25L * lower && slope * width <= 8.0L) {
    const long double at_lower = log_f(lower);
    long double sum = 0.0L;
    for (int panel = 0; panel < 8; ++panel) {
      const long double a = lower + width * panel / 8.0L, b = lower + width * (panel + 1) / 8.0L;
      sum += boost::math::quadrature::gauss<long double, 30>::integrate(
          [&](long double x) { return std::exp(log_f(x) - at_lower); }, a, b);
    }
    return static_cast<double>(at_lower + std::log(sum));
  }
  return log_gig_interval_integral(p, chi, psi, lower, s);
}

struct Case {
  double p, chi, psi, lower;
};

TEST(GigQuantile, RoundTripThroughIntegralsAndMonotone) {
  std::vector<Case> cases;
  for (double d : {1.0, 2.0, 5.0, 20.0, 64.0, 256.0}) {
    for (double chi : {0.0, 1e-3, 0.5, 30.0, 4000.0}) {
      if (chi == 0.0 && 1.0 - d / 2.0 <= 0.0) continue;  // improper at s = 0 without a bound
      for (double lower : {0.0, 1e-3, 1.0, 60.0, 3000.0}) {
        if (chi == 0.0 && lower == 0.0 && 1.0 - d / 2.0 <= 0.0) continue;
        cases.push_back({1.0 - d / 2.0, chi, 1.0, lower});
      }
    }
  }
  for (const Case& c : cases) {
    if (c.chi == 0.0 && c.lower == 0.0 && c.p <= 0.0) continue;
    const double log_mass = log_gig_upper_integral(c.p, c.chi, c.psi, c.lower);
    double previous = 0.0;
    for (double w : kUniforms) {
      const double excess = gig_truncated_quantile_excess(c.p, c.chi, c.psi, c.lower, w, log_mass);
      ASSERT_TRUE(std::isfinite(excess) && excess > 0.0)
          << "p " << c.p << " chi " << c.chi << " lower " << c.lower << " w " << w << ": "
          << excess;
      EXPECT_GE(excess, previous) << "not monotone at w " << w;
      previous = excess;
      // The mass on the short side of s, relative to the whole, against w or 1 - w. s itself
      // carries the rounding of lower + excess, which moves the mass by f(s) ulp(s) / M.
      const double s = c.lower + excess;
      const double log_density_s = (c.p - 1.0) * std::log(s) - 0.5 * (c.chi / s + c.psi * s);
      const double rounding =
          2.0 * std::exp(log_density_s - log_mass) * (std::nextafter(s, 2.0 * s + 1.0) - s);
      if (w <= 0.5) {
        const double below =
            std::exp(reference_log_interval(c.p, c.chi, c.psi, c.lower, s) - log_mass);
        EXPECT_NEAR(below, w, 1e-9 * w + rounding)
            << "p " << c.p << " chi " << c.chi << " lower " << c.lower << " w " << w;
      } else {
        const double above = std::exp(log_gig_upper_integral(c.p, c.chi, c.psi, s) - log_mass);
        EXPECT_NEAR(above, 1.0 - w, 1e-9 * (1.0 - w) + rounding)
            << "p " << c.p << " chi " << c.chi << " lower " << c.lower << " w " << w;
      }
    }
  }
}

TEST(GigQuantile, RejectsUniformsOutsideTheOpenInterval) {
  EXPECT_THROW(gig_truncated_quantile(-9.0, 3.0, 1.0, 0.0, 0.0), std::domain_error);
  EXPECT_THROW(gig_truncated_quantile(-9.0, 3.0, 1.0, 0.0, 1.0), std::domain_error);
  EXPECT_THROW(gig_truncated_quantile(-9.0, 3.0, 1.0, -1.0, 0.5), std::domain_error);
  EXPECT_THROW(gig_truncated_quantile(-9.0, 3.0, 1.0, 0.0, std::nan("")), std::domain_error);
  EXPECT_THROW(gig_truncated_quantile_excess(-9.0, 3.0, 1.0, 0.0, 0.5, std::nan("")),
               std::domain_error);
}

}  // namespace
