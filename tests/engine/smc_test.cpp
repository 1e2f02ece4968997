// SMC engine properties: bit-identical results for any thread count, bookkeeping of ESS and
// resampling, every final particle complete, and clear errors for bad settings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <random>

#include "kingman/api.hpp"
#include "kingman/error.hpp"
#include "kingman/inference/smc.hpp"
#include "random_whitened.hpp"

namespace kingman {
namespace {

WhitenedData random_data(std::size_t n, std::size_t d, unsigned seed) {
  return testing_support::random_whitened(n, d, seed);
}

void expect_identical(const SmcResult& a, const SmcResult& b) {
  EXPECT_EQ(a.log_evidence, b.log_evidence);
  EXPECT_EQ(a.ess, b.ess);
  EXPECT_EQ(a.resampled_at, b.resampled_at);
  ASSERT_EQ(a.particles.size(), b.particles.size());
  for (std::size_t s = 0; s < a.particles.size(); ++s) {
    EXPECT_EQ(a.particles[s].log_weight, b.particles[s].log_weight);
    const auto& ma = a.particles[s].tree.merges;
    const auto& mb = b.particles[s].tree.merges;
    ASSERT_EQ(ma.size(), mb.size());
    for (std::size_t k = 0; k < ma.size(); ++k) {
      EXPECT_EQ(ma[k].left, mb[k].left);
      EXPECT_EQ(ma[k].right, mb[k].right);
      EXPECT_EQ(ma[k].height, mb[k].height);
    }
  }
}

// Runs every SMC proposal on `data` with 1, 2 and 4 threads, and 2 pinned ones: bit-identical
// results.
void expect_thread_count_invariant(const WhitenedData& data, std::size_t particles,
                                   std::uint64_t seed) {
  for (Algorithm proposal : {Algorithm::priorprior, Algorithm::priorpost, Algorithm::postpost,
                             Algorithm::mpost1, Algorithm::mpost2, Algorithm::race}) {
    SCOPED_TRACE(to_string(proposal));
    SmcOptions options;
    options.proposal = proposal;
    options.particles = particles;
    options.seed = seed;
    options.threads = 1;
    const SmcResult one = run_smc(data, 0.0, options);
    options.threads = 2;
    const SmcResult two = run_smc(data, 0.0, options);
    options.threads = 4;
    const SmcResult four = run_smc(data, 0.0, options);
    options.threads = 2;
    options.pin_threads = true;  // where threads run never changes a value either
    const SmcResult pinned = run_smc(data, 0.0, options);
    expect_identical(one, two);
    expect_identical(one, four);
    expect_identical(one, pinned);
    EXPECT_TRUE(std::isfinite(one.log_evidence));
    EXPECT_FALSE(one.resampled_at.empty()) << "the test should exercise resampling";
  }
}

TEST(Smc, SameSeedSameResultForOneTwoAndFourThreads) {
  expect_thread_count_invariant(random_data(24, 5, 3), 64, 17);
}

// Data with missing entries take the per-dimension path (missing_smc.cpp): the same guarantee.
TEST(Smc, MissingEntriesSameSeedSameResultForOneTwoAndFourThreads) {
  WhitenedData data = random_data(16, 4, 9);
  for (std::size_t k = 0; k < data.x.size(); k += 3) data.x[k] = std::nan("");
  data.has_missing = true;
  expect_thread_count_invariant(data, 48, 23);
}

// run_smc of each proposal on `data` (leaf variance 0) gives a finite log evidence.
void expect_finite_evidence(const WhitenedData& data, std::initializer_list<Algorithm> proposals,
                            std::size_t particles) {
  for (Algorithm proposal : proposals) {
    SCOPED_TRACE(to_string(proposal));
    SmcOptions options;
    options.proposal = proposal;
    options.particles = particles;
    EXPECT_TRUE(std::isfinite(run_smc(data, 0.0, options).log_evidence));
  }
}

// Two leaves of variance 0 that agree on the one dimension both observe: the pair's merge
// density (2 delta)^(-1/2) is infinite at 0 but integrable, so p(x) is finite (fit() still adds
// a leaf variance for such rows; run_smc takes them as they are).
TEST(Smc, MissingEntriesAgreeingOnOneSharedDimensionAtZeroVariance) {
  WhitenedData data = random_data(4, 2, 12);
  data.x = {0.5, std::nan(""), 0.5, 1.5, -1.0, 0.3, 2.0, -0.7};
  data.has_missing = true;
  expect_finite_evidence(data,
                         {Algorithm::priorprior, Algorithm::priorpost, Algorithm::postpost,
                          Algorithm::mpost1, Algorithm::mpost2, Algorithm::race},
                         32);
}

// MPost1 and MPost2 on missing entries with thousands of shared dimensions: a Bessel order of
// about -1260, for which the fit over MPost1's range (times every coalescent rate) does not
// converge; the scores then take log_bessel_k itself (it once stopped the run).
TEST(Smc, MissingEntriesWithThousandsOfDimensions) {
  WhitenedData data = random_data(20, 2800, 31);
  for (std::size_t k = 0; k < data.x.size(); k += 10) data.x[k] = std::nan("");
  data.has_missing = true;
  expect_finite_evidence(data, {Algorithm::mpost1, Algorithm::mpost2}, 1);
}

TEST(Smc, InconsistentMissingEntriesAreRefused) {
  WhitenedData data = random_data(6, 2, 4);
  data.x[1] = std::nan("");
  data.has_missing = true;
  SmcOptions options;
  // NaN entries not marked as missing, or missing entries without Lambda's diagonal.
  options.proposal = Algorithm::postpost;
  WhitenedData unmarked = data;
  unmarked.has_missing = false;
  EXPECT_THROW(run_smc(unmarked, 0.0, options), InputError);
  WhitenedData no_diagonal = data;
  no_diagonal.log_lambda_diagonal.clear();
  EXPECT_THROW(run_smc(no_diagonal, 0.0, options), InputError);
}

TEST(Smc, DifferentSeedsDiffer) {
  const WhitenedData data = random_data(10, 2, 4);
  SmcOptions options;
  options.particles = 16;
  const SmcResult a = run_smc(data, 0.0, options);
  options.seed = 2;
  const SmcResult b = run_smc(data, 0.0, options);
  EXPECT_NE(a.log_evidence, b.log_evidence);
}

TEST(Smc, BookkeepingIsConsistent) {
  const WhitenedData data = random_data(15, 3, 5);
  for (auto scheme :
       {kernels::ResamplingScheme::systematic, kernels::ResamplingScheme::stratified,
        kernels::ResamplingScheme::residual, kernels::ResamplingScheme::multinomial}) {
    SmcOptions options;
    options.proposal = Algorithm::priorpost;
    options.particles = 50;
    options.resampling = scheme;
    const SmcResult result = run_smc(data, 0.1, options);
    ASSERT_EQ(result.ess.size(), 14u);
    for (double ess : result.ess) {
      EXPECT_GT(ess, 0.0);
      EXPECT_LE(ess, 50.0 + 1e-9);
    }
    // Resampling happens exactly after the steps whose ESS fell below N/2, never the last.
    std::vector<std::size_t> expected;
    for (std::size_t k = 0; k + 1 < result.ess.size(); ++k)
      if (result.ess[k] < 25.0) expected.push_back(k + 1);
    EXPECT_EQ(result.resampled_at, expected);
    double weight_sum = 0.0, evidence_sum = 0.0;
    for (const SmcParticle& p : result.particles) {
      weight_sum += p.weight;
      evidence_sum += std::exp(p.log_weight - result.log_evidence);
      ASSERT_TRUE(p.tree.complete());
      EXPECT_NO_THROW(validate(p.tree));
    }
    EXPECT_NEAR(weight_sum, 1.0, 1e-12);
    EXPECT_NEAR(evidence_sum, 1.0, 1e-12);
  }
}

TEST(Smc, ThresholdZeroNeverResamplesAndOneAlwaysDoes) {
  const WhitenedData data = random_data(8, 2, 6);
  SmcOptions options;
  options.particles = 20;
  options.ess_threshold = 0.0;
  EXPECT_TRUE(run_smc(data, 0.0, options).resampled_at.empty());
  options.ess_threshold = 1.0;
  const SmcResult always = run_smc(data, 0.0, options);
  for (std::size_t k = 0; k + 1 < always.ess.size(); ++k)
    if (always.ess[k] < 20.0 - 1e-9) {
      EXPECT_NE(std::find(always.resampled_at.begin(), always.resampled_at.end(), k + 1),
                always.resampled_at.end());
    }
}

// Identical points (allowed with a positive leaf variance) make MPost1/MPost2's cheap scores
// infinite; they must still run. With two points there is one pair, so every posterior
// proposal's single weight is its exact mass: all three agree to rounding.
TEST(Smc, IdenticalPointsWithLeafVarianceRunForEveryPosteriorProposal) {
  for (std::size_t n : {2u, 5u}) {
    WhitenedData data = random_data(n, 3, 9);
    for (std::size_t i = 1; i < n; ++i)
      for (std::size_t j = 0; j < 3; ++j) data.x[i * 3 + j] = data.x[j];
    std::vector<double> evidence;
    for (Algorithm proposal : {Algorithm::postpost, Algorithm::mpost1, Algorithm::mpost2}) {
      SmcOptions options;
      options.proposal = proposal;
      options.particles = 20;
      const SmcResult result = run_smc(data, 0.1, options);
      ASSERT_TRUE(std::isfinite(result.log_evidence)) << to_string(proposal) << " n=" << n;
      for (const SmcParticle& p : result.particles) EXPECT_NO_THROW(validate(p.tree));
      evidence.push_back(result.log_evidence);
    }
    if (n == 2) {
      EXPECT_NEAR(evidence[1], evidence[0], 1e-12 * std::abs(evidence[0]));
      EXPECT_NEAR(evidence[2], evidence[0], 1e-12 * std::abs(evidence[0]));
    }
  }
}

TEST(Smc, RejectsBadSettings) {
  const WhitenedData data = random_data(5, 2, 7);
  SmcOptions options;
  options.proposal = Algorithm::greedy_rate1;
  EXPECT_THROW(run_smc(data, 0.0, options), OptionError);
  options.proposal = Algorithm::mpost2;
  options.particles = 0;
  EXPECT_THROW(run_smc(data, 0.0, options), OptionError);
  options.particles = 4;
  options.ess_threshold = 1.5;
  EXPECT_THROW(run_smc(data, 0.0, options), OptionError);
}

TEST(Smc, FitReportsBestParticleAndItsLogJoint) {
  Table t;
  t.rows = 12;
  t.cols = 2;
  t.source = "t";
  std::mt19937_64 engine(8);
  std::normal_distribution<double> normal;
  for (std::size_t k = 0; k < 24; ++k) t.values.push_back(normal(engine));
  FitOptions options;
  options.algorithm = Algorithm::mpost2;
  options.particles = 30;
  const FitResult result = fit(t, options);
  ASSERT_EQ(result.particles.size(), 30u);
  ASSERT_TRUE(result.log_evidence.has_value());
  EXPECT_TRUE(std::isfinite(*result.log_evidence));
  for (const Particle& p : result.particles)
    EXPECT_LE(p.weight, result.particles[result.best].weight);
  EXPECT_TRUE(std::isfinite(result.log_joint));
}

}  // namespace
}  // namespace kingman
