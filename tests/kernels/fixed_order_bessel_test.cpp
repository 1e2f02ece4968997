// The per-run fixed-order fit of power * log x + log K_nu(sqrt x) against the general
// log_bessel_k it approximates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "kingman/kernels/fixed_order_bessel.hpp"
#include "kingman/kernels/log_bessel_k.hpp"

namespace kingman::kernels {
namespace {

// power * log x + log K_nu(sqrt x), and the scale its error is measured against: the larger
// of the two terms (at least 1), as the fit's tolerance is stated.
double exact_term(double nu, double power, double x, double& scale) {
  const double log_k = log_bessel_k(nu, std::sqrt(x)), logarithm = power * std::log(x);
  scale = std::max({1.0, std::abs(log_k), std::abs(logarithm)});
  return logarithm + log_k;
}

TEST(LogBesselKFixedOrder, MatchesLogBesselKInsideAndOutsideItsRange) {
  std::mt19937_64 engine(5);
  for (double nu : {0.5, 0.0, -0.5, -4.0, -31.0, -127.0, -499.0}) {
    for (double power : {0.0, 0.5 * nu}) {
      const double x_min = 1e-4, x_max = 1e5;
      const LogBesselKFixedOrder fit(nu, x_min, x_max, power);
      std::uniform_real_distribution<double> log_x(std::log(x_min) - 3.0, std::log(x_max) + 3.0);
      for (int k = 0; k < 2000; ++k) {
        const double x = std::exp(log_x(engine));
        double scale;
        const double want = exact_term(nu, power, x, scale);
        EXPECT_NEAR(fit.term(x), want, 2e-13 * scale) << "nu=" << nu << " x=" << x;
      }
      // The range's ends, binade edges (pieces' ends) and the values just below them.
      for (double x : {x_min, x_max, std::sqrt(x_min * x_max), 1.0, 1024.0, 0.125,
                       std::nextafter(1.0, 0.0), std::nextafter(1024.0, 0.0), 1.5, 1.0625}) {
        double scale;
        const double want = exact_term(nu, power, x, scale);
        EXPECT_NEAR(fit.term(x), want, 2e-13 * scale) << "nu=" << nu << " x=" << x;
      }
    }
  }
}

// Pieces come from the bits of normal numbers: a range that starts among the subnormals is fitted
// from the smallest normal number on, and below it log_bessel_k answers.
TEST(LogBesselKFixedOrder, RangeFromBelowTheNormalNumbers) {
  const double nu = -3.0;
  const LogBesselKFixedOrder fit(nu, 1e-310, 1e-300, 0.5 * nu);
  for (double x : {1e-310, 3e-308, std::numeric_limits<double>::min(), 1e-305, 1e-300}) {
    double scale;
    const double want = exact_term(nu, 0.5 * nu, x, scale);
    EXPECT_NEAR(fit.term(x), want, 2e-13 * scale) << "x=" << x;
  }
}

TEST(LogBesselKFixedOrder, RejectsBadRanges) {
  EXPECT_THROW(LogBesselKFixedOrder(1.0, 0.0, 1.0), std::domain_error);
  EXPECT_THROW(LogBesselKFixedOrder(1.0, 2.0, 1.0), std::domain_error);
  EXPECT_THROW(LogBesselKFixedOrder(1.0, 1.0, std::numeric_limits<double>::infinity()),
               std::domain_error);
  EXPECT_THROW(LogBesselKFixedOrder(1.0, 1e-320, 1e-310), std::domain_error);
}

}  // namespace
}  // namespace kingman::kernels
