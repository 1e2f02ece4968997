// Every SMC proposal against exact enumeration (MODEL.md section 9): the evidence estimate is
// unbiased on the natural scale, and the weighted particles reproduce the exact posterior of the
// first merge and of the topology. Thresholds are 4 Monte Carlo standard errors, estimated from
// independent runs with fixed seeds; each check also requires the standard error to be small
// enough for the test to have power.
#include <gtest/gtest.h>

#include <cmath>
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
    {"four_2d", 4, 2, 0.0, {0, 0, 1, 0.5, 0.3, 2, 2.5, 2.2}},
    {"four_3d_noisy", 4, 3, 0.3, {0, 0, 0, 0.4, 0.1, -0.2, 1.5, 1.0, 0.8, 1.7, 1.4, 0.6}},
};

struct Proposal {
  Algorithm algorithm;
  Mpost2RowSums row_sums;
  const char* name;
};

// MPost2 twice: with dense row sums (what these small n get by default) and with the leaf row
// sums that larger n get, whose subtractions and recomputations happen here too.
const Proposal kProposals[] = {{Algorithm::priorprior, Mpost2RowSums::automatic, "priorprior"},
                               {Algorithm::priorpost, Mpost2RowSums::automatic, "priorpost"},
                               {Algorithm::postpost, Mpost2RowSums::automatic, "postpost"},
                               {Algorithm::mpost1, Mpost2RowSums::automatic, "mpost1"},
                               {Algorithm::mpost2, Mpost2RowSums::dense, "mpost2"},
                               {Algorithm::mpost2, Mpost2RowSums::leaf_sums, "mpost2_leaf_sums"}};

Table table_of(const Dataset& data) {
  Table t;
  t.rows = data.n;
  t.cols = data.d;
  t.values = data.x;
  t.source = data.name;
  return t;
}

using testing_support::summarize;
using testing_support::Summary;

class SmcExactness : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(SmcExactness, EvidenceAndPosteriorsMatchEnumeration) {
  const Dataset& data = kDatasets[std::get<0>(GetParam())];
  const Proposal& proposal = kProposals[std::get<1>(GetParam())];
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
    FitOptions options;
    options.algorithm = proposal.algorithm;
    options.mpost2_row_sums = proposal.row_sums;
    options.particles = kParticles;
    options.seed = 1000 + static_cast<std::uint64_t>(run);
    options.brownian.covariance = CovarianceKind::identity;
    options.brownian.leaf_variance = data.leaf_variance;
    const FitResult result = fit(table_of(data), options);
    ASSERT_TRUE(result.log_evidence.has_value());
    evidence_ratio.push_back(std::exp(*result.log_evidence - exact.log_evidence));
    std::map<std::pair<int, int>, double> merge_weight;
    std::map<std::string, double> topology_weight;
    for (const Particle& particle : result.particles) {
      const Merge& m = particle.tree.merges.front();
      merge_weight[{static_cast<int>(m.left), static_cast<int>(m.right)}] += particle.weight;
      topology_weight[oracle::canonical_topology(particle.tree)] += particle.weight;
    }
    for (auto& [pair, values] : first_merge) values.push_back(merge_weight[pair]);
    for (auto& [shape, values] : topology) values.push_back(topology_weight[shape]);
    double total = 0.0;
    for (const auto& [shape, w] : topology_weight) total += w;
    EXPECT_NEAR(total, 1.0, 1e-9);
    EXPECT_EQ(topology_weight.size() <= exact.topology_posterior.size(), true);
  }

  SCOPED_TRACE(std::string(data.name) + " " + proposal.name);
  const Summary z = summarize(evidence_ratio);
  EXPECT_LT(z.standard_error, 0.02) << "too noisy to test";
  EXPECT_NEAR(z.mean, 1.0, 4.0 * z.standard_error)
      << "mean of evidence / exact over " << kRuns << " runs";
  EXPECT_LT(std::abs(std::log(z.mean)), 0.05);
  for (const auto& [pair, values] : first_merge) {
    const Summary f = summarize(values);
    const double expected = exact.first_merge_posterior.at(pair);
    EXPECT_LT(f.standard_error, 0.01);
    EXPECT_NEAR(f.mean, expected, 4.0 * f.standard_error + 1e-4)
        << "first merge (" << pair.first << "," << pair.second << ")";
    EXPECT_NEAR(f.mean, expected, 0.03);
  }
  for (const auto& [shape, values] : topology) {
    const Summary f = summarize(values);
    EXPECT_NEAR(f.mean, exact.topology_posterior.at(shape), 4.0 * f.standard_error + 1e-4)
        << "topology " << shape;
  }
}

INSTANTIATE_TEST_SUITE_P(AllProposals, SmcExactness,
                         ::testing::Combine(::testing::Range(0, 3), ::testing::Range(0, 6)),
                         [](const auto& info) {
                           return std::string(kDatasets[std::get<0>(info.param)].name) + "_" +
                                  kProposals[std::get<1>(info.param)].name;
                         });

// MODEL.md section 9: for n = 2 the evidence has a closed form, and PostPost's single weight is
// exactly p(x) (no Monte Carlo error at all).
TEST(SmcExactness, TwoPointsPostPostIsExact) {
  for (std::size_t d : {1u, 2u, 3u, 7u}) {
    Table t;
    t.rows = 2;
    t.cols = d;
    t.source = "two";
    for (std::size_t j = 0; j < 2 * d; ++j) t.values.push_back(j < d ? 0.0 : 0.3 * (j - d + 1));
    double eps = 0.0;
    for (std::size_t j = 0; j < d; ++j) eps += t.values[d + j] * t.values[d + j];
    for (Algorithm a : {Algorithm::postpost, Algorithm::mpost1, Algorithm::mpost2}) {
      FitOptions options;
      options.algorithm = a;
      options.particles = 3;
      options.brownian.covariance = CovarianceKind::identity;
      options.brownian.leaf_variance = 0.0;
      const FitResult result = fit(t, options);
      EXPECT_NEAR(*result.log_evidence, oracle::log_evidence_two_points(eps, d), 1e-9)
          << to_string(a) << " d=" << d;
    }
  }
}

}  // namespace
}  // namespace kingman
