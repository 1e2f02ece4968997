// Gauss-Jacobi rules against the exact moments of the weight (1 - u)^c on [0, 1]: every
// power u^j and (1 - u)^j with j < 2N is integrated to a few units of roundoff relative to the
// moment, for exponents from near -1 (weight piled up at u = 1) to 1e8 (piled up at u = 0, where
// the nodes must keep their relative precision), and one degree further is not.
#include "kingman/kernels/gauss_jacobi.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace {

using kingman::kernels::gauss_jacobi_rule;
using kingman::kernels::GaussJacobiRule;

// integral_0^1 (1 - u)^c u^j du = j! / ((c + 1)(c + 2) ... (c + j + 1)), a product of positive
// factors (no cancellation, unlike a difference of lgamma values for large c).
double moment(double c, int j) {
  double value = 1.0 / (c + 1.0);
  for (int i = 1; i <= j; ++i) value *= static_cast<double>(i) / (c + 1.0 + i);
  return value;
}

double rule_sum(const GaussJacobiRule& rule, int j, bool of_complement) {
  double sum = 0.0;
  for (std::size_t i = 0; i < rule.node.size(); ++i)
    sum += rule.weight[i] * std::pow(of_complement ? rule.complement[i] : rule.node[i], j);
  return sum;
}

TEST(GaussJacobi, IntegratesEveryPolynomialBelowDegree2N) {
  double worst = 0.0;
  for (double c : {-1.0 + 0x1p-20, -0.95, -0.5, 0.0, 0.5, 3.0, 30.0, 1e3, 1e6, 1e8, 0x1p50}) {
    for (std::size_t n : {1, 2, 5, 11, 33, 65}) {
      const GaussJacobiRule rule = gauss_jacobi_rule(n, c);
      ASSERT_EQ(rule.node.size(), n);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_GT(rule.node[i], 0.0);
        ASSERT_LT(rule.node[i], 1.0);
        ASSERT_GT(rule.weight[i], 0.0);
        EXPECT_LE(std::abs(rule.complement[i] + rule.node[i] - 1.0), 0x1p-53);
        if (i > 0) {
          ASSERT_GT(rule.node[i], rule.node[i - 1]);
        }
      }
      for (int j = 0; j < static_cast<int>(2 * n); ++j) {
        const double exact = moment(c, j);
        if (exact < 1e-280) break;  // u^j underflows at the nodes too (c = 1e6, 1e8)
        const double error = std::abs(rule_sum(rule, j, false) - exact) / exact;
        worst = std::max(worst, error);
        EXPECT_LT(error, 1e-12) << "c " << c << " N " << n << " u^" << j;
        // (1 - u)^j: the weight's own moments 1 / (c + j + 1).
        const double complement_error = std::abs(rule_sum(rule, j, true) * (c + j + 1.0) - 1.0);
        EXPECT_LT(complement_error, 1e-12) << "c " << c << " N " << n << " (1-u)^" << j;
      }
      // Degree 2N is beyond the rule: its error, the monic P_N's squared norm, is visible for
      // few nodes (it falls like 4^-2N relative, so the test can tell only there).
      if (n <= 2 && c > -0.99 && c < 1e3) {
        const double beyond = moment(c, static_cast<int>(2 * n));
        EXPECT_GT(std::abs(rule_sum(rule, static_cast<int>(2 * n), false) - beyond) / beyond, 1e-6)
            << "c " << c << " N " << n;
      }
    }
  }
  RecordProperty("worst_relative_error", std::to_string(worst / 1e-16) + "e-16");
}

TEST(GaussJacobi, RefusesOutOfRangeArguments) {
  EXPECT_THROW(gauss_jacobi_rule(5, -1.0), std::domain_error);
  EXPECT_THROW(gauss_jacobi_rule(5, std::nan("")), std::domain_error);
  EXPECT_THROW(gauss_jacobi_rule(5, INFINITY), std::domain_error);
  EXPECT_THROW(gauss_jacobi_rule(0, 1.0), std::domain_error);
  EXPECT_THROW(gauss_jacobi_rule(513, 1.0), std::domain_error);
}

}  // namespace
