// The per-run fixed-order fit of power * log x + log K_nu(sqrt x) against the general
// log_bessel_k it approximates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

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

// The pieces fitted through a loop that splits them over threads (here: four std::threads, the
// ranges started last first) give the fit that one thread gives, bit for bit.
TEST(LogBesselKFixedOrder, SameFitThroughAParallelLoop) {
  const LogBesselKFixedOrder::RangeLoop four_threads =
      [](std::size_t count, std::size_t,
         const std::function<void(std::size_t, std::size_t)>& body) {
        constexpr std::size_t kParts = 4;
        std::vector<std::thread> threads;
        for (std::size_t part = kParts; part-- > 0;)
          threads.emplace_back(body, count * part / kParts, count * (part + 1) / kParts);
        for (std::thread& thread : threads) thread.join();
      };
  std::size_t loop_calls = 0;
  const LogBesselKFixedOrder::RangeLoop counted = [&](std::size_t count, std::size_t work,
                                                      const auto& body) {
    ++loop_calls;
    four_threads(count, work, body);
  };
  std::mt19937_64 engine(9);
  for (double nu : {-0.5, -31.0, -127.0}) {
    const double power = 0.5 * nu, x_min = 1e-5, x_max = 1e3;
    const LogBesselKFixedOrder serial(nu, x_min, x_max, power);
    loop_calls = 0;
    const LogBesselKFixedOrder parallel(nu, x_min, x_max, power, counted);
    EXPECT_GT(loop_calls, 0u);
    ASSERT_EQ(parallel.pieces(), serial.pieces()) << "nu=" << nu;
    ASSERT_EQ(parallel.piece_bits(), serial.piece_bits()) << "nu=" << nu;
    std::uniform_real_distribution<double> log_x(std::log(x_min), std::log(x_max));
    std::vector<double> x(4000), from_serial(x.size()), from_parallel(x.size());
    for (double& value : x) value = std::exp(log_x(engine));
    serial.terms(x.data(), from_serial.data(), x.size());
    parallel.terms(x.data(), from_parallel.data(), x.size());
    for (std::size_t k = 0; k < x.size(); ++k)
      ASSERT_EQ(from_parallel[k], from_serial[k]) << "nu=" << nu << " x=" << x[k];
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
