// The quick truncated-GIG sampler against the CDF built from the GIG integrals (Kolmogorov-
// Smirnov with fixed seeds), against the mean as a ratio of integrals, and its envelope's
// efficiency, over the parameters of the reference sampler's tests and those the race meets
// (psi = 1, d = 1 to 256, the bound anywhere from 0 to far in the upper tail).
#include "kingman/kernels/gig_quick_sampler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <vector>

#include "kingman/kernels/gig.hpp"
#include "kingman/kernels/rng.hpp"

namespace {

using namespace kingman::kernels;

// P(sqrt(n) D > x) for the Kolmogorov distribution, with Stephens' finite-n correction.
double kolmogorov_p_value(double statistic, std::size_t n) {
  const double root = std::sqrt(static_cast<double>(n));
  const double x = (root + 0.12 + 0.11 / root) * statistic;
  double sum = 0.0;
  for (int k = 1; k <= 100; ++k) {
    sum += 2.0 * (k % 2 == 1 ? 1.0 : -1.0) * std::exp(-2.0 * k * k * x * x);
  }
  return std::clamp(sum, 0.0, 1.0);
}

struct Case {
  const char* name;
  double p, chi, psi, lower;
};

const Case kCases[] = {
    {"d1", 0.5, 0.3, 1.0, 0.0},
    {"d1_gamma", 0.5, 0.0, 1.0, 0.0},
    {"d1_gamma_bound", 0.5, 0.0, 1.0, 2.0},
    {"d2_tiny_chi", 0.0, 1e-8, 1.0, 0.0},
    {"d2_flat", 0.0, 1e-8, 1e-3, 0.0},
    {"d2_gamma_bound", 0.0, 0.0, 1.0, 0.3},
    {"d3", -0.5, 2.0, 3.0, 0.0},
    {"d20_tiny_chi", -9.0, 1e-8, 45.0, 0.0},
    {"d20_tiny_chi_bound", -9.0, 1e-4, 1.0, 1e-3},
    {"d20_close_pair", -9.0, 0.01, 1.0, 0.0},
    {"d20_below_mode", -9.0, 40.0, 1.0, 0.5},
    {"d20_near_mode", -9.0, 50.0, 1.0, 2.5},
    {"d20_at_mode", -9.0, 40.0, 1.0, 2.0},
    {"d20_tail", -9.0, 50.0, 1.0, 30.0},
    {"d20_far_tail", -9.0, 50.0, 1.0, 300.0},
    {"d20_far_pair", -9.0, 400.0, 1.0, 0.0},
    {"d256_large_chi", -127.0, 1e4, 4950.0, 0.0},
    {"d256_tail", -127.0, 1e4, 4950.0, 3.0},
    {"d256_tiny_chi", -127.0, 1e-8, 1.0, 1e-3},
    {"d256_race", -127.0, 500.0, 1.0, 1.0},
    {"d1000", -499.0, 1e6, 1e7, 0.0},
    {"d1000_far_tail", -499.0, 1e6, 1e7, 1e4},
    {"d1_far_tail_gamma", 0.5, 0.0, 1e7, 10.0},
};

TEST(QuickTruncatedGigSampler, KolmogorovSmirnovAgainstIntegrals) {
  constexpr std::size_t n = 3000;
  std::uint64_t case_index = 0;
  double smallest_p_value = 1.0, most_proposals = 0.0;
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    RandomStream stream(20240602, case_index++);
    const QuickTruncatedGigSampler sampler(c.p, c.chi, c.psi, c.lower);
    std::vector<double> draws(n);
    for (double& s : draws) {
      s = sampler(stream);
      ASSERT_GE(s, c.lower);
      ASSERT_TRUE(std::isfinite(s));
    }
    std::sort(draws.begin(), draws.end());
    const double log_mass = log_gig_upper_integral(c.p, c.chi, c.psi, c.lower);
    double statistic = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const double cdf =
          -std::expm1(log_gig_upper_integral(c.p, c.chi, c.psi, draws[i]) - log_mass);
      statistic = std::max({statistic, std::fabs(cdf - static_cast<double>(i) / n),
                            std::fabs(cdf - static_cast<double>(i + 1) / n)});
    }
    const double p_value = kolmogorov_p_value(statistic, n);
    EXPECT_GT(p_value, 1e-3) << "D = " << statistic;
    const double u = sampler.log_mode();
    const double log_peak = c.p * u - 0.5 * (c.chi * std::exp(-u) + c.psi * std::exp(u));
    const double proposals = sampler.envelope_mass() / std::exp(log_mass - log_peak);
    EXPECT_GE(proposals, 1.0 - 1e-9);
    EXPECT_LE(proposals, 1.6);
    smallest_p_value = std::min(smallest_p_value, p_value);
    most_proposals = std::max(most_proposals, proposals);
  }
  std::printf(
      "quick truncated GIG sampler: %zu cases, smallest KS p-value %.3g, at most %.3f "
      "proposals per draw\n",
      std::size(kCases), smallest_p_value, most_proposals);
}

// The mean of the restricted law is I_{p+1}(lower) / I_p(lower), from the scaled integrals.
TEST(QuickTruncatedGigSampler, MeanMatchesRatioOfIntegrals) {
  constexpr std::size_t n = 20000;
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    RandomStream stream(78, 0);
    const QuickTruncatedGigSampler sampler(c.p, c.chi, c.psi, c.lower);
    double sum = 0.0, sum_squares = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const double s = sampler(stream);
      sum += s;
      sum_squares += s * s;
    }
    const double mean = sum / n;
    const double standard_error = std::sqrt((sum_squares / n - mean * mean) / n);
    const double expected =
        c.lower > 0.0
            ? c.lower * std::exp(log_gig_upper_integral_scaled(c.p + 1.0, c.chi, c.psi, c.lower) -
                                 log_gig_upper_integral_scaled(c.p, c.chi, c.psi, c.lower))
            : std::exp(log_gig_normalizer(c.p + 1.0, c.chi, c.psi) -
                       log_gig_normalizer(c.p, c.chi, c.psi));
    EXPECT_NEAR(mean, expected, 5.0 * standard_error + 1e-12 * expected);
  }
}

TEST(QuickTruncatedGigSampler, DeterministicAndChecksItsDomain) {
  const QuickTruncatedGigSampler sampler(-9.0, 50.0, 1.0, 30.0);
  RandomStream first(5, 1), second(5, 1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(sampler(first), sampler(second));
  EXPECT_THROW(QuickTruncatedGigSampler(0.0, 0.0, 1.0, 0.0), std::domain_error);
  EXPECT_THROW(QuickTruncatedGigSampler(-1.0, 1.0, 0.0, 0.0), std::domain_error);
  EXPECT_THROW(QuickTruncatedGigSampler(-1.0, -1.0, 1.0, 0.0), std::domain_error);
  EXPECT_THROW(QuickTruncatedGigSampler(-1.0, 1.0, 1.0, -1.0), std::domain_error);
  RandomStream stream(1, 2);
  EXPECT_GE(QuickTruncatedGigSampler(0.0, 0.0, 1.0, 0.5)(stream), 0.5);  // proper once r > 0
}

}  // namespace
