// The regenerative race (run_smc with Algorithm::race): complete, valid trees in every final
// particle, consistent bookkeeping, resampling, reproducibility, and clear errors. Its
// exactness against enumeration is in tests/stats/race_exactness_test.cpp; its thread
// determinism with the other proposals in smc_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "kingman/api.hpp"
#include "kingman/error.hpp"
#include "kingman/inference/smc.hpp"
#include "kingman/model/covariance.hpp"
#include "kingman/model/generate.hpp"
#include "random_whitened.hpp"

namespace kingman {
namespace {

WhitenedData random_data(std::size_t n, std::size_t d, unsigned seed) {
  return testing_support::random_whitened(n, d, seed);
}

WhitenedData model_data(std::size_t n, std::size_t d, std::uint64_t seed) {
  GenerateOptions options;
  options.n = n;
  options.d = d;
  options.seed = seed;
  return whiten(generate(options).data, Covariance::identity(d));
}

SmcOptions race(std::size_t particles, std::uint64_t seed = 1) {
  SmcOptions options;
  options.proposal = Algorithm::race;
  options.particles = particles;
  options.seed = seed;
  return options;
}

void expect_valid_particles(const SmcResult& result, std::size_t n) {
  double weight_sum = 0.0, evidence_sum = 0.0;
  for (const SmcParticle& p : result.particles) {
    ASSERT_EQ(p.tree.leaf_count, n);
    ASSERT_TRUE(p.tree.complete());
    EXPECT_NO_THROW(validate(p.tree));
    for (const Merge& m : p.tree.merges) EXPECT_TRUE(std::isfinite(m.height));
    weight_sum += p.weight;
    evidence_sum += std::exp(p.log_weight - result.log_evidence);
  }
  EXPECT_NEAR(weight_sum, 1.0, 1e-12);
  EXPECT_NEAR(evidence_sum, 1.0, 1e-12);
}

TEST(Race, EveryFinalParticleIsAValidCompleteTree) {
  for (double leaf_variance : {0.0, 0.2}) {
    for (std::size_t d : {1u, 2u, 20u}) {
      SCOPED_TRACE("d=" + std::to_string(d) + " v0=" + std::to_string(leaf_variance));
      const WhitenedData data = random_data(40, d, static_cast<unsigned>(d));
      const SmcResult result = run_smc(data, leaf_variance, race(32));
      ASSERT_EQ(result.particles.size(), 32u);
      EXPECT_TRUE(std::isfinite(result.log_evidence));
      expect_valid_particles(result, 40);
    }
  }
}

TEST(Race, ModelDataWithManyRowsAndResampling) {
  // Clustered data at a size where rows lose all their listed partners and get rescanned.
  const WhitenedData data = model_data(300, 5, 3);
  SmcOptions options = race(16);
  options.threads = 2;
  const SmcResult result = run_smc(data, 0.0, options);
  EXPECT_TRUE(std::isfinite(result.log_evidence));
  EXPECT_FALSE(result.resampled_at.empty());
  expect_valid_particles(result, 300);
  // Resampled copies share their clocks and so their next merge, but they diverge after it.
  std::set<std::vector<std::size_t>> shapes;
  for (const SmcParticle& p : result.particles) {
    std::vector<std::size_t> ids;
    for (const Merge& m : p.tree.merges) ids.push_back(m.left * 1000 + m.right);
    shapes.insert(ids);
  }
  EXPECT_GT(shapes.size(), 1u);
}

TEST(Race, BookkeepingFollowsTheThreshold) {
  const WhitenedData data = random_data(15, 3, 5);
  for (auto scheme : {kernels::ResamplingScheme::systematic, kernels::ResamplingScheme::residual,
                      kernels::ResamplingScheme::multinomial}) {
    SmcOptions options = race(50);
    options.resampling = scheme;
    const SmcResult result = run_smc(data, 0.1, options);
    ASSERT_EQ(result.ess.size(), 14u);
    std::vector<std::size_t> expected;
    for (std::size_t k = 0; k + 1 < result.ess.size(); ++k) {
      EXPECT_GT(result.ess[k], 0.0);
      EXPECT_LE(result.ess[k], 50.0 + 1e-9);
      if (result.ess[k] < 25.0) expected.push_back(k + 1);
    }
    EXPECT_EQ(result.resampled_at, expected);
    expect_valid_particles(result, 15);
  }
}

TEST(Race, SameSeedSameResultDifferentSeedDifferent) {
  const WhitenedData data = random_data(20, 4, 9);
  const SmcResult a = run_smc(data, 0.0, race(24, 7));
  const SmcResult b = run_smc(data, 0.0, race(24, 7));
  EXPECT_EQ(a.log_evidence, b.log_evidence);
  for (std::size_t s = 0; s < a.particles.size(); ++s) {
    EXPECT_EQ(a.particles[s].log_weight, b.particles[s].log_weight);
    EXPECT_EQ(a.particles[s].tree.merges.back().height, b.particles[s].tree.merges.back().height);
  }
  const SmcResult c = run_smc(data, 0.0, race(24, 8));
  EXPECT_NE(a.log_evidence, c.log_evidence);
}

TEST(Race, TwoPointsNeedNoMonteCarlo) {
  // One step, no killed pair: every particle's weight is N_C = p(x), whatever its merge time.
  const WhitenedData data = random_data(2, 3, 11);
  const SmcResult result = run_smc(data, 0.0, race(8));
  for (const SmcParticle& p : result.particles) {
    EXPECT_DOUBLE_EQ(p.weight, 1.0 / 8.0);
    EXPECT_GT(p.tree.merges[0].height, 0.0);
  }
  EXPECT_EQ(result.particles[0].tree.merges[0].left, 0u);
  EXPECT_NE(result.particles[0].tree.merges[0].height, result.particles[1].tree.merges[0].height);
}

TEST(Race, DuplicatePointsNeedALeafVariance) {
  WhitenedData data = random_data(6, 3, 12);
  for (std::size_t j = 0; j < 3; ++j) data.x[3 * 3 + j] = data.x[j];  // row 3 = row 0
  EXPECT_THROW(run_smc(data, 0.0, race(4)), NumericalError);
  const SmcResult noisy = run_smc(data, 0.05, race(4));
  EXPECT_TRUE(std::isfinite(noisy.log_evidence));
}

TEST(Race, FitRoutesTheAlgorithm) {
  Table t;
  t.rows = 25;
  t.cols = 3;
  t.source = std::string("t");  // not the literal: GCC 12 with ASan warns falsely (-Wrestrict)
  std::mt19937_64 engine(13);
  std::normal_distribution<double> normal;
  for (std::size_t k = 0; k < 75; ++k) t.values.push_back(normal(engine));
  FitOptions options;
  options.algorithm = Algorithm::race;
  options.particles = 20;
  const FitResult result = fit(t, options);
  EXPECT_EQ(result.algorithm, Algorithm::race);
  ASSERT_EQ(result.particles.size(), 20u);
  ASSERT_TRUE(result.log_evidence.has_value());
  EXPECT_TRUE(std::isfinite(*result.log_evidence));
  EXPECT_TRUE(std::isfinite(result.log_joint));
}

}  // namespace
}  // namespace kingman
