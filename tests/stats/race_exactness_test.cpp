// The regenerative race (MODEL.md section 6) against exact enumeration (section 9): for n = 2
// its single weight N_C is p(x) exactly; for n = 3 and 4 the mean of the evidence estimate over
// independent runs is p(x) and the weighted particles reproduce the exact posterior of the first
// merge and of the topology, within 4 Monte Carlo standard errors. The datasets cover leaf
// variance 0 and > 0, d = 1 (GIG shape p > 0) to d = 5, and two tight pairs far apart, where
// the merges kill pairs that were far from ringing (the weight's no-integral shortcut).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "exact_enumeration.hpp"
#include "exactness_check.hpp"
#include "kingman/api.hpp"

namespace kingman {
namespace {

struct Dataset {
  const char* name;
  std::size_t n, d;
  double leaf_variance;
  std::vector<double> x;
};

const Dataset kDatasets[] = {
    {"three_2d", 3, 2, 0.0, {0, 0, 1, 0.5, 0.3, 2}},
    {"three_1d_noisy", 3, 1, 0.5, {0, 0.7, 2.0}},
    {"four_2d", 4, 2, 0.0, {0, 0, 1, 0.5, 0.3, 2, 2.5, 2.2}},
    {"four_3d_noisy", 4, 3, 0.3, {0, 0, 0, 0.4, 0.1, -0.2, 1.5, 1.0, 0.8, 1.7, 1.4, 0.6}},
    {"four_two_tight_pairs", 4, 2, 0.0, {0, 0, 0.05, 0.02, 5, 5, 5.04, 4.97}},
    {"four_5d_noisy", 4, 5, 0.1, {0,   0,   0,   0,   0,   0.5, 0.2,  -0.3, 0.1, 0.4,
                                  1.0, 1.2, 0.9, 1.1, 0.8, 0.3, -0.6, 0.2,  0.5, 0.1}},
};

Table table_of(const Dataset& data) {
  Table t;
  t.rows = data.n;
  t.cols = data.d;
  t.values = data.x;
  t.source = data.name;
  return t;
}

FitOptions race_options(double leaf_variance, std::size_t particles, std::uint64_t seed) {
  FitOptions options;
  options.algorithm = Algorithm::race;
  options.particles = particles;
  options.seed = seed;
  options.brownian.covariance = CovarianceKind::identity;
  options.brownian.leaf_variance = leaf_variance;
  return options;
}

using testing_support::summarize;
using testing_support::Summary;

// |mean - expected| in standard errors, with the 1e-4 floor the checks allow (posteriors that
// are 0 or 1 to many digits have no Monte Carlo error).
double deviation(const Summary& f, double expected) {
  return std::abs(f.mean - expected) / (f.standard_error + 0.25e-4);
}

class RaceExactness : public ::testing::TestWithParam<int> {};

TEST_P(RaceExactness, EvidenceAndPosteriorsMatchEnumeration) {
  const Dataset& data = kDatasets[GetParam()];
  const oracle::Enumeration exact =
      oracle::enumerate_brownian(data.x, data.n, data.d, data.leaf_variance);

  constexpr int kRuns = 16;
  constexpr std::size_t kParticles = 4000;
  std::vector<double> evidence_ratio;
  std::map<std::pair<int, int>, std::vector<double>> first_merge;
  std::map<std::string, std::vector<double>> topology;
  for (const auto& [pair, p] : exact.first_merge_posterior) first_merge[pair];
  for (const auto& [shape, p] : exact.topology_posterior) topology[shape];

  for (int run = 0; run < kRuns; ++run) {
    const FitResult result =
        fit(table_of(data),
            race_options(data.leaf_variance, kParticles, 2000 + static_cast<std::uint64_t>(run)));
    ASSERT_TRUE(result.log_evidence.has_value());
    evidence_ratio.push_back(std::exp(*result.log_evidence - exact.log_evidence));
    std::map<std::pair<int, int>, double> merge_weight;
    std::map<std::string, double> topology_weight;
    for (const Particle& particle : result.particles) {
      ASSERT_TRUE(particle.tree.complete());
      ASSERT_NO_THROW(validate(particle.tree));
      const Merge& m = particle.tree.merges.front();
      merge_weight[{static_cast<int>(m.left), static_cast<int>(m.right)}] += particle.weight;
      topology_weight[oracle::canonical_topology(particle.tree)] += particle.weight;
    }
    for (auto& [pair, values] : first_merge) values.push_back(merge_weight[pair]);
    for (auto& [shape, values] : topology) values.push_back(topology_weight[shape]);
    double total = 0.0;
    for (const auto& [shape, w] : topology_weight) total += w;
    EXPECT_NEAR(total, 1.0, 1e-9);
    EXPECT_LE(topology_weight.size(), exact.topology_posterior.size());
  }

  SCOPED_TRACE(data.name);
  const Summary z = summarize(evidence_ratio);
  std::cout << "[race] " << data.name << ": mean evidence / exact = " << z.mean << " +- "
            << z.standard_error << " (" << kRuns << " runs of " << kParticles
            << " particles; exact log p(x) = " << exact.log_evidence << ")\n";
  EXPECT_LT(z.standard_error, 0.02) << "too noisy to test";
  EXPECT_NEAR(z.mean, 1.0, 4.0 * z.standard_error)
      << "mean of evidence / exact over " << kRuns << " runs";
  EXPECT_LT(std::abs(std::log(z.mean)), 0.05);
  double worst_first_merge = 0.0, worst_topology = 0.0;
  for (const auto& [pair, values] : first_merge) {
    const Summary f = summarize(values);
    const double expected = exact.first_merge_posterior.at(pair);
    worst_first_merge = std::max(worst_first_merge, deviation(f, expected));
    EXPECT_LT(f.standard_error, 0.01);
    EXPECT_NEAR(f.mean, expected, 4.0 * f.standard_error + 1e-4)
        << "first merge (" << pair.first << "," << pair.second << ")";
    EXPECT_NEAR(f.mean, expected, 0.03);
  }
  for (const auto& [shape, values] : topology) {
    const Summary f = summarize(values);
    const double expected = exact.topology_posterior.at(shape);
    worst_topology = std::max(worst_topology, deviation(f, expected));
    EXPECT_NEAR(f.mean, expected, 4.0 * f.standard_error + 1e-4) << "topology " << shape;
  }
  std::cout << "[race] " << data.name << ": largest deviation in standard errors: first merge "
            << worst_first_merge << ", topology " << worst_topology << "\n";
}

INSTANTIATE_TEST_SUITE_P(Datasets, RaceExactness,
                         ::testing::Range(0, static_cast<int>(std::size(kDatasets))),
                         [](const auto& info) { return std::string(kDatasets[info.param].name); });

// n = 2: one step, no killed pair, alpha = N_C = p(x) exactly for every particle.
TEST(RaceExactness, TwoPointsAreExact) {
  for (std::size_t d : {1u, 2u, 3u, 7u}) {
    Table t;
    t.rows = 2;
    t.cols = d;
    t.source = "two";
    for (std::size_t j = 0; j < 2 * d; ++j) t.values.push_back(j < d ? 0.0 : 0.3 * (j - d + 1));
    double eps = 0.0;
    for (std::size_t j = 0; j < d; ++j) eps += t.values[d + j] * t.values[d + j];
    const FitResult zero = fit(t, race_options(0.0, 5, 1));
    EXPECT_NEAR(*zero.log_evidence, oracle::log_evidence_two_points(eps, d), 1e-9) << "d=" << d;
    for (const Particle& p : zero.particles) EXPECT_DOUBLE_EQ(p.weight, 0.2);
    const double v0 = 0.25;
    const FitResult noisy = fit(t, race_options(v0, 5, 1));
    const oracle::Enumeration exact = oracle::enumerate_brownian(t.values, 2, d, v0);
    EXPECT_NEAR(*noisy.log_evidence, exact.log_evidence, 1e-8) << "d=" << d << " v0=" << v0;
  }
}

}  // namespace
}  // namespace kingman
