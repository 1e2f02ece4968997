// PriorPrior, PriorPost and PostPost on the binary / multinomial likelihood against exact
// enumeration (MODEL.md sections 5, 7 and 9): the evidence estimate (base term included) is
// unbiased on the natural scale, and the weighted particles reproduce the exact posterior of
// the first merge and of the topology. Thresholds are 4 Monte Carlo standard errors from
// independent runs with fixed seeds; each check also requires the standard error to be small
// enough for the test to have power. The oracle is Felsenstein pruning
// (tests/support/discrete_likelihood), sharing no code with the engine's messages.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "discrete_likelihood.hpp"
#include "exact_enumeration.hpp"
#include "kingman/api.hpp"
#include "kingman/model/discrete_data.hpp"

namespace kingman {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Dataset {
  const char* name;
  Likelihood likelihood;
  std::size_t n, d;
  std::vector<double> values;          // row-major, NaN = missing
  std::vector<double> mutation_rates;  // empty: 1
};

const Dataset kDatasets[] = {
    {"binary_three", Likelihood::binary, 3, 3, {0, 1, 1, 0, 1, 0, 1, 0, 0}, {}},
    {"binary_four", Likelihood::binary, 4, 3, {0, 1, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0}, {0.5, 1, 2}},
    {"binary_four_missing",
     Likelihood::binary,
     4,
     3,
     {0, kNaN, 1, 0, 1, 0, 1, 0, kNaN, 1, 1, 0},
     {}},
    {"multinomial_four", Likelihood::multinomial, 4, 2, {0, 2, 1, 2, 0, 1, 2, 1}, {0.7, 1.5}},
};

const Algorithm kProposals[] = {Algorithm::priorprior, Algorithm::priorpost, Algorithm::postpost,
                                Algorithm::race};

Table table_of(const Dataset& data) {
  Table t;
  t.rows = data.n;
  t.cols = data.d;
  t.values = data.values;
  t.source = data.name;
  return t;
}

FitOptions options_of(const Dataset& data, Algorithm proposal) {
  FitOptions options;
  options.algorithm = proposal;
  options.likelihood = data.likelihood;
  options.discrete.mutation_rates = data.mutation_rates;
  if (data.likelihood == Likelihood::multinomial) options.discrete.categories = 3;
  return options;
}

// The oracle's model of the data exactly as fit() encodes it (equilibrium from the data).
oracle::DiscreteModel model_of(const Dataset& data) {
  FitOptions options = options_of(data, Algorithm::greedy_rate1);
  const DiscreteData encoded = encode_discrete(table_of(data), data.likelihood, options.discrete);
  oracle::DiscreteModel model;
  model.n = encoded.n;
  model.d = encoded.d;
  model.categories = encoded.categories;
  model.values.assign(encoded.values.begin(), encoded.values.end());
  model.equilibrium = encoded.equilibrium;
  model.rates = encoded.mutation_rate;
  return model;
}

struct Summary {
  double mean = 0.0, standard_error = 0.0;
};

Summary summarize(const std::vector<double>& values) {
  double mean = 0.0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double squares = 0.0;
  for (double v : values) squares += (v - mean) * (v - mean);
  const double variance = squares / static_cast<double>(values.size() - 1);
  return {mean, std::sqrt(variance / static_cast<double>(values.size()))};
}

// Checks one proposal on one dataset against its enumeration.
void check_proposal(const Dataset& data, Algorithm proposal, const oracle::Enumeration& exact,
                    double ess_threshold) {
  constexpr int kRuns = 16;
  constexpr std::size_t kParticles = 2000;
  std::vector<double> evidence_ratio;
  std::map<std::pair<int, int>, std::vector<double>> first_merge;
  std::map<std::string, std::vector<double>> topology;
  for (const auto& [pair, p] : exact.first_merge_posterior) first_merge[pair];
  for (const auto& [shape, p] : exact.topology_posterior) topology[shape];

  for (int run = 0; run < kRuns; ++run) {
    FitOptions options = options_of(data, proposal);
    options.particles = kParticles;
    options.seed = 3000 + static_cast<std::uint64_t>(run);
    options.ess_threshold = ess_threshold;
    const FitResult result = fit(table_of(data), options);
    ASSERT_TRUE(result.log_evidence.has_value());
    ASSERT_EQ(result.particles.size(), kParticles);
    evidence_ratio.push_back(std::exp(*result.log_evidence - exact.log_evidence));
    std::map<std::pair<int, int>, double> merge_weight;
    std::map<std::string, double> topology_weight;
    for (const Particle& particle : result.particles) {
      ASSERT_TRUE(particle.tree.complete());
      const Merge& m = particle.tree.merges.front();
      merge_weight[{static_cast<int>(m.left), static_cast<int>(m.right)}] += particle.weight;
      topology_weight[oracle::canonical_topology(particle.tree)] += particle.weight;
    }
    for (auto& [pair, values] : first_merge) values.push_back(merge_weight[pair]);
    for (auto& [shape, values] : topology) values.push_back(topology_weight[shape]);
    double total = 0.0;
    for (const auto& [shape, w] : topology_weight) total += w;
    EXPECT_NEAR(total, 1.0, 1e-9);
  }

  const Summary z = summarize(evidence_ratio);
  EXPECT_LT(z.standard_error, 0.02) << "too noisy to test";
  EXPECT_NEAR(z.mean, 1.0, 4.0 * z.standard_error)
      << "mean of evidence / exact over " << kRuns << " runs";
  EXPECT_LT(std::abs(std::log(z.mean)), 0.05);
  double worst_z = std::abs(z.mean - 1.0) / z.standard_error;
  for (const auto& [pair, values] : first_merge) {
    const Summary f = summarize(values);
    const double expected = exact.first_merge_posterior.at(pair);
    EXPECT_LT(f.standard_error, 0.01);
    EXPECT_NEAR(f.mean, expected, 4.0 * f.standard_error + 1e-4)
        << "first merge (" << pair.first << "," << pair.second << ")";
    EXPECT_NEAR(f.mean, expected, 0.03);
    if (f.standard_error > 0)
      worst_z = std::max(worst_z, std::abs(f.mean - expected) / f.standard_error);
  }
  for (const auto& [shape, values] : topology) {
    const Summary f = summarize(values);
    EXPECT_NEAR(f.mean, exact.topology_posterior.at(shape), 4.0 * f.standard_error + 1e-4)
        << "topology " << shape;
  }
  std::string name = to_string(proposal);
  if (ess_threshold == 1.0) name += "_resampling_every_step";
  ::testing::Test::RecordProperty(name + "_evidence_ratio_e6",
                                  static_cast<int>(std::round(z.mean * 1e6)));
  ::testing::Test::RecordProperty(name + "_evidence_se_e6",
                                  static_cast<int>(std::round(z.standard_error * 1e6)));
  ::testing::Test::RecordProperty(name + "_worst_z_e3",
                                  static_cast<int>(std::round(worst_z * 1e3)));
}

// One test per dataset (one enumeration per test process), every proposal in it.
class DiscreteSmcExactness : public ::testing::TestWithParam<int> {};

TEST_P(DiscreteSmcExactness, EvidenceAndPosteriorsMatchEnumeration) {
  const Dataset& data = kDatasets[GetParam()];
  oracle::EnumerationOptions enumeration;
  enumeration.threads = 2;
  const oracle::Enumeration exact = oracle::enumerate_discrete(model_of(data), enumeration);
  for (Algorithm proposal : kProposals) {
    SCOPED_TRACE(std::string(data.name) + " " + to_string(proposal));
    check_proposal(data, proposal, exact, 0.5);
  }
  // Resampling after every step: PostPost's particles then share states (one set of pair
  // masses for several particles) beside states of their own, in the same step.
  SCOPED_TRACE(std::string(data.name) + " postpost, resampling after every step");
  check_proposal(data, Algorithm::postpost, exact, 1.0);
}

INSTANTIATE_TEST_SUITE_P(AllProposals, DiscreteSmcExactness, ::testing::Range(0, 4),
                         [](const auto& info) { return std::string(kDatasets[info.param].name); });

// For n = 2, PostPost's single weight sum_C G_C is exactly p(x) / base term: no Monte Carlo
// error, so the evidence must match enumeration to quadrature accuracy (agreeing and
// disagreeing leaves, a missing entry, per-column rates, K = 3).
// For n = 2 PostPost's weight sum_C G_C and the race's N_C (lambda = 1) are p(x) itself.
TEST(DiscreteSmcExactness, TwoPointsPostPostAndRaceAreExact) {
  const Dataset pairs[] = {
      {"agree", Likelihood::binary, 2, 3, {0, 1, 1, 0, 1, 1}, {}},
      {"disagree", Likelihood::binary, 2, 3, {0, 1, 1, 1, 0, 0}, {0.3, 1, 4}},
      {"missing", Likelihood::binary, 2, 3, {0, kNaN, 1, 1, 1, kNaN}, {}},
      {"multinomial", Likelihood::multinomial, 2, 2, {0, 2, 2, 2}, {0.7, 1.5}},
  };
  for (Algorithm algorithm : {Algorithm::postpost, Algorithm::race}) {
    for (const Dataset& data : pairs) {
      FitOptions options = options_of(data, algorithm);
      options.particles = 3;
      const FitResult result = fit(table_of(data), options);
      const double exact = oracle::enumerate_discrete(model_of(data)).log_evidence;
      EXPECT_NEAR(*result.log_evidence, exact, 1e-9) << data.name << " " << to_string(algorithm);
      for (const Particle& p : result.particles)
        EXPECT_NEAR(p.log_weight, exact - std::log(3.0), 1e-9) << data.name;
    }
  }
}

}  // namespace
}  // namespace kingman
