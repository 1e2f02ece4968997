// The Gauss-Laguerre lower tail against the adaptive quadrature of log_gig_lower_integral over
// a grid of shapes (d = 1 to 256), chi, psi and bounds from just below the mode down to far in
// the tail: wherever it answers, it agrees to 1e-10 relative (of the integral); it answers
// wherever beta is small, and declines at and beyond the mode.
#include "kingman/kernels/gig_tail.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "kingman/kernels/gig.hpp"

namespace {

using namespace kingman::kernels;

double gig_mode(double p, double chi, double psi) {
  const double root = std::sqrt(p * p + chi * psi);
  return p >= 0.0 ? (p + root) / psi : chi / (root - p);
}

TEST(GigLowerTailLaguerre, AgreesWithAdaptiveQuadrature) {
  double worst = 0.0, worst_beta = 0.0;
  int answered = 0, declined = 0;
  for (double p : {0.5, 0.0, -0.5, -1.5, -4.0, -9.0, -31.0, -127.0}) {
    for (double chi : {1e-8, 1e-4, 0.01, 1.0, 10.0, 100.0, 1e4, 1e6}) {
      for (double psi : {0.01, 1.0, 100.0}) {
        const double mode = gig_mode(p, chi, psi);
        for (double fraction = 0.95; fraction > 1e-4; fraction *= 0.8) {
          const double r = mode * fraction;
          const double got = log_gig_lower_tail_laguerre(p, chi, psi, r);
          if (std::isnan(got)) {
            ++declined;
            continue;
          }
          ++answered;
          const double expected = log_gig_lower_integral(p, chi, psi, r);
          if (expected < -700.0) continue;  // below double range: both are ~0 on every scale
          const double error = std::fabs(std::expm1(got - expected));
          const double rate = p + 0.5 * (chi / r - psi * r);
          const double beta = 0.5 * (chi / r + psi * r) / (rate * rate);
          EXPECT_LT(error, 1e-10) << "p=" << p << " chi=" << chi << " psi=" << psi << " r=" << r
                                  << " rate=" << rate << " err=" << error << " beta=" << beta;
          if (error > worst) {
            worst = error;
            worst_beta = beta;
          }
        }
      }
    }
  }
  std::printf(
      "Laguerre lower tail: %d answered, %d declined, worst relative error %.2e (beta "
      "%.3f)\n",
      answered, declined, worst, worst_beta);
  EXPECT_GT(answered, 1000);
}

TEST(GigLowerTailLaguerre, AnswersFarBelowTheModeAndDeclinesNearIt) {
  const double p = -9.0, chi = 40.0, mode = gig_mode(p, chi, 1.0);
  EXPECT_FALSE(std::isnan(log_gig_lower_tail_laguerre(p, chi, 1.0, 0.3 * mode)));
  EXPECT_TRUE(std::isnan(log_gig_lower_tail_laguerre(p, chi, 1.0, 0.9 * mode)));
  EXPECT_TRUE(std::isnan(log_gig_lower_tail_laguerre(p, chi, 1.0, mode)));
  EXPECT_TRUE(std::isnan(log_gig_lower_tail_laguerre(p, chi, 1.0, 2.0 * mode)));
  EXPECT_THROW(log_gig_lower_tail_laguerre(p, chi, 1.0, 0.0), std::domain_error);
  EXPECT_THROW(log_gig_lower_tail_laguerre(p, chi, 0.0, 1.0), std::domain_error);
}

}  // namespace
