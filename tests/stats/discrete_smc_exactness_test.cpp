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
#include "exactness_check.hpp"
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

// Checks one proposal on one dataset against its enumeration.
void check_proposal(const Dataset& data, Algorithm proposal, const oracle::Enumeration& exact,
                    double ess_threshold) {
  std::string label = to_string(proposal);
  if (ess_threshold == 1.0) label += "_resampling_every_step";
  const testing_support::ExactnessRuns runs;
  testing_support::check_against_enumeration(
      [&](std::uint64_t seed) {
        FitOptions options = options_of(data, proposal);
        options.particles = runs.particles;
        options.seed = seed;
        options.ess_threshold = ess_threshold;
        return fit(table_of(data), options);
      },
      exact, runs, label);
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
