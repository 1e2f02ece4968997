// The GIG integrals against mpmath (kernels/tools/make_gig_table.py) and against each other,
// and the exact truncated sampler against the CDF built from those integrals
// (Kolmogorov-Smirnov with fixed seeds).
#include "kingman/kernels/gig.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <numbers>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kingman/kernels/log_sum_exp.hpp"
#include "kingman/kernels/rng.hpp"

namespace {

using namespace kingman::kernels;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Error of a log value, scaled as for log_bessel_k: absolute for |log| <= 1, relative above.
// For |log I| <= 1 this is the relative error of I itself.
double scaled_error(double got, double expected) {
  if (std::isinf(expected) && got == expected) return 0.0;
  return std::fabs(got - expected) / std::max(1.0, std::fabs(expected));
}

struct Row {
  double p, chi, psi, r, log_upper, log_lower;
};

std::vector<Row> read_table() {
  const std::string path = std::string(KINGMAN_TEST_DATA_DIR) + "/gig_integral_table.csv";
  std::ifstream in(path);
  std::vector<Row> rows;
  std::string line;
  if (!std::getline(in, line)) return rows;
  while (std::getline(in, line)) {
    std::vector<double> fields;
    std::stringstream stream(line);
    std::string field;
    while (std::getline(stream, field, ',')) fields.push_back(std::strtod(field.c_str(), nullptr));
    if (fields.size() == 6) {
      rows.push_back({fields[0], fields[1], fields[2], fields[3], fields[4], fields[5]});
    }
  }
  return rows;
}

TEST(GigIntegrals, MatchHighPrecisionTable) {
  const std::vector<Row> rows = read_table();
  ASSERT_GT(rows.size(), 1000u) << "missing or short tests/data/gig_integral_table.csv";
  double worst = 0.0;
  double worst_absolute = 0.0;  // |error of log I| where |log I| <= 1e3, i.e. relative error of I
  for (const Row& row : rows) {
    const double upper = log_gig_upper_integral(row.p, row.chi, row.psi, row.r);
    const double lower = log_gig_lower_integral(row.p, row.chi, row.psi, row.r);
    for (const auto& [got, expected] : {std::pair{upper, row.log_upper}, {lower, row.log_lower}}) {
      const double error = scaled_error(got, expected);
      // 1e-12 of the log value; and the integral itself to 2e-12 relative whenever its log is
      // small enough for a double to hold that (|log I| < 1e3: one ulp is 1.1e-13).
      EXPECT_LE(error, 1e-12) << "p = " << row.p << ", chi = " << row.chi << ", psi = " << row.psi
                              << ", r = " << row.r << ": got " << got << ", expected " << expected;
      worst = std::max(worst, error);
      if (std::isfinite(expected) && std::fabs(expected) < 1e3) {
        EXPECT_LE(std::fabs(got - expected), 2e-12) << "p = " << row.p << ", chi = " << row.chi
                                                    << ", psi = " << row.psi << ", r = " << row.r;
        worst_absolute = std::max(worst_absolute, std::fabs(got - expected));
      }
    }
  }
  std::printf("gig integrals: %zu rows, max scaled error %.3g, max relative error of I %.3g\n",
              rows.size(), worst, worst_absolute);
}

// Quadrature on each side of r against the Bessel formula for the whole line, with r at the
// mode, and far out in either tail (where one side is nearly everything).
TEST(GigIntegrals, SidesAddUpToTheBesselNormalizer) {
  for (const double p : {0.5, 0.0, -0.5, -9.0, -127.0, -499.0}) {
    for (const double chi : {1e-8, 0.3, 1e3, 1e6}) {
      for (const double psi : {1e-3, 1.0, 45.0, 4950.0, 1e7}) {
        const double total = log_gig_normalizer(p, chi, psi);
        for (const double r : {1e-9, 1e-4, 0.01, 0.3, 1.0, 3.0, 10.0, 1e3, 1e4}) {
          const double upper = log_gig_upper_integral(p, chi, psi, r);
          const double lower = log_gig_lower_integral(p, chi, psi, r);
          EXPECT_LE(scaled_error(log_add_exp(upper, lower), total), 1e-13)
              << "p = " << p << ", chi = " << chi << ", psi = " << psi << ", r = " << r;
        }
      }
    }
  }
}

// chi = 0: the gamma integral, int_0^inf s^{p-1} e^{-psi s/2} ds = Gamma(p) (2/psi)^p.
TEST(GigIntegrals, GammaLimit) {
  EXPECT_NEAR(log_gig_normalizer(0.5, 0.0, 2.0), 0.5 * std::log(std::numbers::pi), 1e-15);
  EXPECT_NEAR(log_gig_normalizer(3.0, 0.0, 1.0), std::log(2.0) + 3.0 * std::log(2.0), 1e-14);
  // The Bessel formula tends to it as chi -> 0.
  EXPECT_NEAR(log_gig_normalizer(0.5, 1e-30, 2.0), log_gig_normalizer(0.5, 0.0, 2.0), 1e-14);
  // p <= 0 diverges at s = 0, but a tail above r > 0 is finite.
  EXPECT_EQ(log_gig_normalizer(0.0, 0.0, 1.0), kInf);
  EXPECT_EQ(log_gig_normalizer(-9.0, 0.0, 1.0), kInf);
  EXPECT_EQ(log_gig_lower_integral(-9.0, 0.0, 1.0, 2.0), kInf);
  EXPECT_TRUE(std::isfinite(log_gig_upper_integral(-9.0, 0.0, 1.0, 2.0)));
}

TEST(GigIntegrals, ScaledUpperIntegral) {
  for (const double p : {0.5, -0.5, -9.0, -127.0}) {
    for (const double chi : {0.0, 0.3, 1e3}) {
      for (const double r : {0.01, 1.0, 30.0}) {
        const double psi = 45.0;
        const double direct = log_gig_upper_integral(p, chi, psi, r);
        const double log_f = p * std::log(r) - 0.5 * (chi / r + psi * r);
        EXPECT_NEAR(log_gig_upper_integral_scaled(p, chi, psi, r) + log_f, direct,
                    1e-12 * std::max(1.0, std::fabs(direct)));
      }
    }
  }
  // Far in the tail the unscaled value is ~ -psi r/2 = -5e10 (ulp 7.6e-6), but the scaled one
  // keeps full precision. There I(r) = f(r) / g'(r) (1 + O(g'' / g'^2)) with g = -log f, so
  // I(r) / (r f(r)) = 1 / (psi r/2 - (p - 1) - chi/(2r)) up to ~1e-21 relative.
  const double p = -9.0, chi = 1.0, psi = 1e7, r = 1e4;
  const double mills = -std::log(0.5 * psi * r - (p - 1.0) - 0.5 * chi / r);
  EXPECT_NEAR(log_gig_upper_integral_scaled(p, chi, psi, r), mills, 1e-12);
}

TEST(GigIntegrals, IntervalIntegralAndEdges) {
  const double p = -9.0, chi = 50.0, psi = 1.0;
  const double total = log_gig_normalizer(p, chi, psi);
  const double middle = log_gig_interval_integral(p, chi, psi, 1.0, 4.0);
  const double below = log_gig_lower_integral(p, chi, psi, 1.0);
  const double above = log_gig_upper_integral(p, chi, psi, 4.0);
  const double parts[] = {below, middle, above};
  EXPECT_LE(scaled_error(log_sum_exp(parts), total), 1e-13);
  EXPECT_EQ(log_gig_upper_integral(p, chi, psi, 0.0), total);
  EXPECT_EQ(log_gig_lower_integral(p, chi, psi, 0.0), -kInf);
  EXPECT_EQ(log_gig_interval_integral(p, chi, psi, 2.0, 2.0), -kInf);
  EXPECT_THROW(log_gig_normalizer(p, -1.0, psi), std::domain_error);
  EXPECT_THROW(log_gig_normalizer(p, chi, 0.0), std::domain_error);
  EXPECT_THROW(log_gig_normalizer(std::nan(""), chi, psi), std::domain_error);
  EXPECT_THROW(log_gig_upper_integral(p, chi, psi, -1.0), std::domain_error);
  EXPECT_THROW(log_gig_interval_integral(p, chi, psi, 3.0, 2.0), std::domain_error);
}

// One kernel's tails at many lower limits (GigUpperTail): the same bits as the free functions,
// on both sides of the mode, far below it (the Bessel normalizer) and far above it, for the
// gamma case and for the tiny and huge chi of the table's range.
TEST(GigIntegrals, UpperTailMatchesTheFreeFunctionsBitForBit) {
  std::size_t compared = 0;
  for (const double p : {0.5, 0.0, -0.5, -9.0, -31.0, -127.0}) {
    for (const double chi : {0.0, 1e-8, 0.3, 50.0, 1e6}) {
      for (const double psi : {1e-3, 1.0, 45.0, 1e7}) {
        const GigUpperTail tail(p, chi, psi);
        const double normalizer = log_gig_normalizer(p, chi, psi);
        EXPECT_TRUE(tail.log_normalizer() == normalizer ||
                    (std::isnan(normalizer) && std::isnan(tail.log_normalizer())));
        for (const double r : {1e-300, 1e-9, 1e-4, 0.01, 0.3, 1.0, 2.5, 10.0, 1e3, 1e6}) {
          const double expected = log_gig_upper_integral_scaled(p, chi, psi, r);
          EXPECT_EQ(tail.log_scaled(r), expected)
              << "p = " << p << ", chi = " << chi << ", psi = " << psi << ", r = " << r;
          EXPECT_EQ(tail.log_scaled(r, std::log(r)), expected);
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 6u * 5 * 4 * 10);
  const GigUpperTail tail(-9.0, 50.0, 1.0);
  EXPECT_THROW(tail.log_scaled(0.0), std::domain_error);
  EXPECT_THROW(tail.log_scaled(kInf), std::domain_error);
  EXPECT_THROW(GigUpperTail(-9.0, -1.0, 1.0), std::domain_error);
}

// ---- The exact sampler -------------------------------------------------------------------

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

struct SamplerCase {
  const char* name;
  double p, chi, psi, lower, upper;
};

// d = 1, 2, 3, 20, 256, 1000; chi tiny and large; untruncated, mildly and strongly truncated
// (r many standard deviations into the upper tail), and truncated from above.
const SamplerCase kSamplerCases[] = {
    {"d1", 0.5, 0.3, 1.0, 0.0, kInf},
    {"d1_gamma", 0.5, 0.0, 1.0, 0.0, kInf},
    {"d2_tiny_chi", 0.0, 1e-8, 1.0, 0.0, kInf},
    {"d2_flat", 0.0, 1e-8, 1e-3, 0.0, kInf},
    {"d3", -0.5, 2.0, 3.0, 0.0, kInf},
    {"d20_tiny_chi", -9.0, 1e-8, 45.0, 0.0, kInf},
    {"d20_near_mode", -9.0, 50.0, 1.0, 2.5, kInf},
    {"d20_tail", -9.0, 50.0, 1.0, 30.0, kInf},
    {"d20_far_tail", -9.0, 50.0, 1.0, 300.0, kInf},
    {"d256_large_chi", -127.0, 1e4, 4950.0, 0.0, kInf},
    {"d256_tail", -127.0, 1e4, 4950.0, 3.0, kInf},
    {"d256_tiny_chi", -127.0, 1e-8, 1.0, 1e-3, kInf},
    {"d1000", -499.0, 1e6, 1e7, 0.0, kInf},
    {"d1000_far_tail", -499.0, 1e6, 1e7, 1e4, kInf},
    {"d1_far_tail_gamma", 0.5, 0.0, 1e7, 10.0, kInf},
    {"d3_below", -0.5, 2.0, 3.0, 0.0, 1.0},
    {"d20_below_tail", -9.0, 50.0, 1.0, 0.0, 0.5},
    {"d256_below_far", -127.0, 1e4, 45.0, 0.0, 1e-3},
    {"d2_below", 0.0, 1e-8, 1.0, 0.0, 1e-12},
    {"d1_gamma_below", 0.5, 0.0, 1.0, 0.0, 1e-6},
    {"d20_between", -9.0, 50.0, 1.0, 3.0, 4.0},
};

// CDF of the restricted law at s, from the integrals.
double restricted_cdf(const SamplerCase& c, double s, double log_mass) {
  if (c.upper == kInf) {
    return -std::expm1(log_gig_upper_integral(c.p, c.chi, c.psi, s) - log_mass);
  }
  return std::exp(log_gig_interval_integral(c.p, c.chi, c.psi, c.lower, s) - log_mass);
}

TEST(TruncatedGigSampler, KolmogorovSmirnovAgainstIntegrals) {
  constexpr std::size_t n = 3000;
  std::uint64_t case_index = 0;
  double smallest_p_value = 1.0;
  double most_proposals = 0.0;
  for (const SamplerCase& c : kSamplerCases) {
    SCOPED_TRACE(c.name);
    RandomStream stream(20240601, case_index++);
    const TruncatedGigSampler sampler(c.p, c.chi, c.psi, c.lower, c.upper);
    std::vector<double> draws(n);
    for (double& s : draws) {
      s = sampler(stream);
      ASSERT_GE(s, c.lower);
      ASSERT_LE(s, c.upper);
    }
    std::sort(draws.begin(), draws.end());
    const double log_mass = log_gig_interval_integral(c.p, c.chi, c.psi, c.lower, c.upper);
    double statistic = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const double cdf = restricted_cdf(c, draws[i], log_mass);
      statistic = std::max({statistic, std::fabs(cdf - static_cast<double>(i) / n),
                            std::fabs(cdf - static_cast<double>(i + 1) / n)});
    }
    const double p_value = kolmogorov_p_value(statistic, n);
    EXPECT_GT(p_value, 1e-3) << "D = " << statistic;
    // The envelope is tight: expected proposals per draw = envelope mass / target mass.
    const double u = sampler.log_mode();
    const double log_peak = c.p * u - 0.5 * (c.chi * std::exp(-u) + c.psi * std::exp(u));
    const double proposals = sampler.envelope_mass() / std::exp(log_mass - log_peak);
    EXPECT_GE(proposals, 1.0 - 1e-9);
    EXPECT_LE(proposals, 1.6);
    smallest_p_value = std::min(smallest_p_value, p_value);
    most_proposals = std::max(most_proposals, proposals);
  }
  std::printf(
      "truncated GIG sampler: %zu cases, smallest KS p-value %.3g, at most %.3f "
      "proposals per draw\n",
      std::size(kSamplerCases), smallest_p_value, most_proposals);
}

// The mean of the restricted law is a ratio of integrals with p + 1 and p: a second, moment-
// based check (CLT threshold from the sample's own standard error).
TEST(TruncatedGigSampler, MeanMatchesRatioOfIntegrals) {
  constexpr std::size_t n = 20000;
  for (const SamplerCase& c : kSamplerCases) {
    if (c.upper != kInf) continue;
    SCOPED_TRACE(c.name);
    RandomStream stream(77, 0);
    double sum = 0.0, sum_squares = 0.0;
    const TruncatedGigSampler sampler(c.p, c.chi, c.psi, c.lower, c.upper);
    for (std::size_t i = 0; i < n; ++i) {
      const double s = sampler(stream);
      sum += s;
      sum_squares += s * s;
    }
    const double mean = sum / n;
    const double standard_error = std::sqrt((sum_squares / n - mean * mean) / n);
    // Far in the tail log I ~ -psi r / 2 = -5e10 has an ulp of 7.6e-6, too coarse for a ratio:
    // there the scaled integrals give I_{p+1}(r) / I_p(r) = r exp(scaled_{p+1} - scaled_p).
    const double expected =
        c.lower > 0.0
            ? c.lower * std::exp(log_gig_upper_integral_scaled(c.p + 1.0, c.chi, c.psi, c.lower) -
                                 log_gig_upper_integral_scaled(c.p, c.chi, c.psi, c.lower))
            : std::exp(log_gig_normalizer(c.p + 1.0, c.chi, c.psi) -
                       log_gig_normalizer(c.p, c.chi, c.psi));
    EXPECT_NEAR(mean, expected, 5.0 * standard_error + 1e-12 * expected);
  }
}

TEST(TruncatedGigSampler, FreeFunctionsAndDeterminism) {
  RandomStream first(5, 1), second(5, 1);
  for (int i = 0; i < 100; ++i) {
    const double a = sample_truncated_gig(-9.0, 50.0, 1.0, 30.0, first);
    EXPECT_EQ(a, sample_truncated_gig(-9.0, 50.0, 1.0, 30.0, second));
    EXPECT_GE(a, 30.0);
    const double b = sample_truncated_gig_below(-9.0, 50.0, 1.0, 0.5, first);
    EXPECT_EQ(b, sample_truncated_gig_below(-9.0, 50.0, 1.0, 0.5, second));
    EXPECT_LE(b, 0.5);
    EXPECT_GT(b, 0.0);
  }
  RandomStream stream(1, 2);
  EXPECT_THROW(sample_truncated_gig(0.0, 0.0, 1.0, 0.0, stream), std::domain_error);
  EXPECT_THROW(sample_truncated_gig_below(0.5, 1.0, 1.0, 0.0, stream), std::domain_error);
  EXPECT_GE(sample_truncated_gig(0.0, 0.0, 1.0, 0.5, stream), 0.5);  // proper once r > 0
}

}  // namespace
