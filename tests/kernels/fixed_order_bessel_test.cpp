// The per-run fixed-order fit of log K against the general log_bessel_k it approximates.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kingman/kernels/fixed_order_bessel.hpp"
#include "kingman/kernels/log_bessel_k.hpp"

namespace kingman::kernels {
namespace {

TEST(LogBesselKFixedOrder, MatchesLogBesselKInsideAndOutsideItsRange) {
  std::mt19937_64 engine(5);
  for (double nu : {0.5, 0.0, -0.5, -4.0, -31.0, -127.0, -499.0}) {
    const double x_min = 1e-4, x_max = 1e5;
    const LogBesselKFixedOrder fit(nu, x_min, x_max);
    std::uniform_real_distribution<double> log_x(std::log(x_min) - 3.0, std::log(x_max) + 3.0);
    for (int k = 0; k < 2000; ++k) {
      const double x = std::exp(log_x(engine));
      const double want = log_bessel_k(nu, std::sqrt(x));
      EXPECT_NEAR(fit.of_square(x), want, 2e-13 * std::max(1.0, std::abs(want)))
          << "nu=" << nu << " x=" << x;
    }
    // Piece boundaries and the range ends.
    for (double x : {x_min, x_max, std::sqrt(x_min * x_max)}) {
      const double want = log_bessel_k(nu, std::sqrt(x));
      EXPECT_NEAR(fit.of_square(x), want, 2e-13 * std::max(1.0, std::abs(want)));
    }
  }
}

TEST(LogBesselKFixedOrder, RejectsBadRanges) {
  EXPECT_THROW(LogBesselKFixedOrder(1.0, 0.0, 1.0), std::domain_error);
  EXPECT_THROW(LogBesselKFixedOrder(1.0, 2.0, 1.0), std::domain_error);
}

}  // namespace
}  // namespace kingman::kernels
