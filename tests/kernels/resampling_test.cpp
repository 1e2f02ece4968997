#include "kingman/kernels/resampling.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "kingman/kernels/rng.hpp"

namespace {

using namespace kingman::kernels;

constexpr ResamplingScheme kSchemes[] = {ResamplingScheme::systematic, ResamplingScheme::stratified,
                                         ResamplingScheme::residual, ResamplingScheme::multinomial};

const char* name(ResamplingScheme scheme) {
  switch (scheme) {
    case ResamplingScheme::systematic:
      return "systematic";
    case ResamplingScheme::stratified:
      return "stratified";
    case ResamplingScheme::residual:
      return "residual";
    case ResamplingScheme::multinomial:
      return "multinomial";
  }
  return "?";
}

std::vector<double> normalized(std::vector<double> weights) {
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  for (double& w : weights) w /= total;
  return weights;
}

std::vector<std::size_t> counts(const std::vector<std::size_t>& ancestors, std::size_t n) {
  std::vector<std::size_t> result(n, 0);
  for (const std::size_t a : ancestors) ++result.at(a);
  return result;
}

// Skewed random weights with some exact zeros.
std::vector<double> random_weights(std::size_t n, RandomStream& stream) {
  std::vector<double> weights(n);
  for (double& w : weights) {
    const double e = stream.exponential();
    w = stream.uniform() < 0.1 ? 0.0 : e * e * e;
  }
  weights[stream.below(n)] = 1.0;  // never all zero
  return normalized(weights);
}

TEST(Resampling, SortedInRangeAndNeverPicksZeroWeights) {
  RandomStream stream(11, 0);
  for (const ResamplingScheme scheme : kSchemes) {
    SCOPED_TRACE(name(scheme));
    for (int trial = 0; trial < 200; ++trial) {
      const std::size_t n = 1 + stream.below(40);
      const std::vector<double> weights = random_weights(n, stream);
      const std::size_t m = 1 + stream.below(3 * n);
      const std::vector<std::size_t> ancestors = resample(scheme, weights, m, stream);
      ASSERT_EQ(ancestors.size(), m);
      EXPECT_TRUE(std::is_sorted(ancestors.begin(), ancestors.end()));
      for (const std::size_t a : ancestors) {
        ASSERT_LT(a, n);
        EXPECT_GT(weights[a], 0.0) << "picked a zero-weight particle";
      }
    }
  }
}

// Systematic gives floor(M W) or ceil(M W); residual at least floor(M W) (its deterministic
// copies); stratified is within 2 of M W.
TEST(Resampling, OffspringCountsStayNearExpectation) {
  RandomStream stream(12, 0);
  for (int trial = 0; trial < 500; ++trial) {
    const std::size_t n = 1 + stream.below(50);
    const std::vector<double> weights = random_weights(n, stream);
    for (const std::size_t m : {std::size_t{1}, n, 2 * n + 3}) {
      for (const ResamplingScheme scheme :
           {ResamplingScheme::systematic, ResamplingScheme::residual,
            ResamplingScheme::stratified}) {
        SCOPED_TRACE(name(scheme));
        const std::vector<std::size_t> c = counts(resample(scheme, weights, m, stream), n);
        for (std::size_t i = 0; i < n; ++i) {
          const double expected = static_cast<double>(m) * weights[i];
          const double count = static_cast<double>(c[i]);
          if (scheme == ResamplingScheme::stratified) {
            EXPECT_LT(std::fabs(count - expected), 2.0);
          } else if (scheme == ResamplingScheme::residual) {
            EXPECT_GE(count, std::floor(expected - 1e-9));
          } else {
            EXPECT_GE(count, std::floor(expected - 1e-9));
            EXPECT_LE(count, std::ceil(expected + 1e-9));
          }
        }
      }
    }
  }
}

// Each particle gets M W_i offspring on average: mean over many fixed-seed repetitions, within
// five standard errors (from the repetitions' own spread).
TEST(Resampling, UnbiasedOffspringCounts) {
  const std::vector<double> weights =
      normalized({0.3, 3.0, 0.01, 1.7, 0.0, 2.2, 0.9, 5.0, 0.49, 1.4});
  const std::size_t n = weights.size();
  constexpr int repetitions = 20000;
  for (const ResamplingScheme scheme : kSchemes) {
    for (const std::size_t m : {n, std::size_t{25}}) {
      SCOPED_TRACE(name(scheme));
      std::vector<double> sum(n, 0.0), sum_squares(n, 0.0);
      for (int r = 0; r < repetitions; ++r) {
        RandomStream stream(99, static_cast<std::uint64_t>(r), m);
        const std::vector<std::size_t> c = counts(resample(scheme, weights, m, stream), n);
        for (std::size_t i = 0; i < n; ++i) {
          sum[i] += c[i];
          sum_squares[i] += static_cast<double>(c[i]) * c[i];
        }
      }
      for (std::size_t i = 0; i < n; ++i) {
        const double mean = sum[i] / repetitions;
        const double variance = std::max(0.0, sum_squares[i] / repetitions - mean * mean);
        const double standard_error = std::sqrt(variance / repetitions);
        const double expected = static_cast<double>(m) * weights[i];
        EXPECT_NEAR(mean, expected, 5.0 * standard_error + 1e-9) << "particle " << i;
        if (scheme == ResamplingScheme::multinomial) {
          // Binomial(M, W_i) variance; the estimate's relative error is ~ sqrt(2 / R) = 1%.
          const double binomial = expected * (1.0 - weights[i]);
          EXPECT_NEAR(variance, binomial, 0.08 * binomial + 1e-12) << "particle " << i;
        }
      }
    }
  }
}

TEST(Resampling, DeterministicGivenTheStreamAndTheUniforms) {
  RandomStream source(13, 0);
  const std::vector<double> weights = random_weights(30, source);
  for (const ResamplingScheme scheme : kSchemes) {
    RandomStream a(1, 2, 3), b(1, 2, 3);
    EXPECT_EQ(resample(scheme, weights, 47, a), resample(scheme, weights, 47, b));
  }
  // The stream overload is the uniform overload fed from the stream.
  RandomStream s(4, 5);
  const std::vector<std::size_t> from_stream =
      resample(ResamplingScheme::stratified, weights, 30, s);
  RandomStream t(4, 5);
  std::vector<double> uniforms(30);
  for (double& u : uniforms) u = t.uniform();
  std::vector<std::size_t> from_uniforms(30);
  stratified_resample(weights, uniforms, from_uniforms);
  EXPECT_EQ(from_stream, from_uniforms);
  EXPECT_EQ(resampling_uniform_count(ResamplingScheme::multinomial, 30), 31u);
}

TEST(Resampling, SystematicKnownAnswer) {
  // Cumulative weights 0.1, 0.4, 0.4, 1.0 and positions (k + 0.5)/4 = .125, .375, .625, .875.
  const std::vector<double> weights = {0.1, 0.3, 0.0, 0.6};
  std::vector<std::size_t> ancestors(4);
  systematic_resample(weights, 0.5, ancestors);
  EXPECT_EQ(ancestors, (std::vector<std::size_t>{1, 1, 3, 3}));
}

TEST(Resampling, ResidualKnownAnswer) {
  // M W = 0.4, 1.2, 0, 2.4: copies of 1, 3, 3, and R = 1 position over the fractional parts
  // .4, .2, 0, .4 at E_0 / (E_0 + E_1), E_j = -log u_j (the first R + 1 of M + 1 uniforms).
  const std::vector<double> weights = {0.1, 0.3, 0.0, 0.6};
  std::vector<std::size_t> ancestors(4);
  const double e = std::exp(-1.0);
  residual_resample(weights, std::vector<double>{e, e, 0.3, 0.3, 0.3}, ancestors);  // at 0.5
  EXPECT_EQ(ancestors, (std::vector<std::size_t>{1, 1, 3, 3}));
  residual_resample(weights, std::vector<double>{e, std::exp(-9.0), 0.3, 0.3, 0.3},
                    ancestors);  // at 0.1
  EXPECT_EQ(ancestors, (std::vector<std::size_t>{0, 1, 3, 3}));
  residual_resample(weights, std::vector<double>{std::exp(-9.0), e, 0.3, 0.3, 0.3},
                    ancestors);  // at 0.9
  EXPECT_EQ(ancestors, (std::vector<std::size_t>{1, 3, 3, 3}));
  // It takes M + 1 uniforms.
  EXPECT_THROW(residual_resample(weights, std::vector<double>{0.5, 0.5}, ancestors),
               std::invalid_argument);
}

TEST(Resampling, InvalidInputsThrow) {
  std::vector<std::size_t> ancestors(3);
  EXPECT_THROW(systematic_resample(std::vector<double>{0.0, 0.0}, 0.5, ancestors),
               std::domain_error);
  EXPECT_THROW(systematic_resample(std::vector<double>{}, 0.5, ancestors), std::domain_error);
  EXPECT_THROW(systematic_resample(std::vector<double>{0.5, -0.1}, 0.5, ancestors),
               std::domain_error);
  EXPECT_THROW(systematic_resample(std::vector<double>{0.5, std::nan("")}, 0.5, ancestors),
               std::domain_error);
  EXPECT_THROW(
      stratified_resample(std::vector<double>{0.5, 0.5}, std::vector<double>{0.5}, ancestors),
      std::invalid_argument);
  EXPECT_THROW(multinomial_resample(std::vector<double>{0.5, 0.5},
                                    std::vector<double>{0.5, 0.5, 0.5}, ancestors),
               std::invalid_argument);
}

}  // namespace
