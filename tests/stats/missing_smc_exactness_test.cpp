// PriorPrior, PriorPost, PostPost, MPost1, MPost2 and the race on Brownian data with missing
// entries (per-dimension messages, engine/src/inference/smc/missing_smc.cpp) against exact
// enumeration (MODEL.md sections 3.4, 5, 6 and 9; the oracle's per-dimension message passing shares
// no code with the engine). The datasets have pairs that share one dimension of zero variance (an
// integrable (2 delta)^(-1/2) at 0), pairs that share none (Z = 1), and leaf variance > 0.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "exact_enumeration.hpp"
#include "exactness_check.hpp"
#include "kingman/api.hpp"

namespace kingman {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Dataset {
  const char* name;
  std::size_t n, d;
  double leaf_variance;
  std::vector<double> x;  // row-major, NaN = missing
};

const Dataset kDatasets[] = {
    {"three_2d_missing", 3, 2, 0.0, {0, 0, kNaN, 0.5, 0.3, 2}},
    {"four_2d_missing", 4, 2, 0.0, {0, 0, 1, kNaN, 0.3, 2, kNaN, 2.2}},
    {"four_3d_missing_noisy",
     4,
     3,
     0.3,
     {0, kNaN, 0, 0.4, 0.1, kNaN, 1.5, 1.0, 0.8, kNaN, 1.4, 0.6}},
};

const Algorithm kProposals[] = {Algorithm::priorprior, Algorithm::priorpost, Algorithm::postpost,
                                Algorithm::mpost1,     Algorithm::mpost2,    Algorithm::race};

Table table_of(const Dataset& data) {
  Table t;
  t.rows = data.n;
  t.cols = data.d;
  t.values = data.x;
  t.source = data.name;
  return t;
}

FitOptions options_of(const Dataset& data, Algorithm proposal) {
  FitOptions options;
  options.algorithm = proposal;
  options.brownian.covariance = CovarianceKind::identity;
  options.brownian.leaf_variance = data.leaf_variance;
  return options;
}

// One test per dataset (one enumeration per test process), every proposal in it.
class MissingSmcExactness : public ::testing::TestWithParam<int> {};

TEST_P(MissingSmcExactness, EvidenceAndPosteriorsMatchEnumeration) {
  const Dataset& data = kDatasets[GetParam()];
  oracle::EnumerationOptions enumeration;
  enumeration.threads = 2;
  const oracle::Enumeration exact =
      oracle::enumerate_brownian(data.x, data.n, data.d, data.leaf_variance, enumeration);
  for (Algorithm proposal : kProposals) {
    SCOPED_TRACE(std::string(data.name) + " " + to_string(proposal));
    // 3000 particles: with 2000, MPost1's first-merge frequencies on four_3d_missing_noisy had a
    // standard error of 0.0103, above the 0.01 that the check asks for power.
    testing_support::ExactnessRuns runs;
    runs.particles = 3000;
    testing_support::check_against_enumeration(
        [&](std::uint64_t seed) {
          FitOptions options = options_of(data, proposal);
          options.particles = runs.particles;
          options.seed = seed;
          options.threads = 2;
          return fit(table_of(data), options);
        },
        exact, runs, to_string(proposal));
  }
}

INSTANTIATE_TEST_SUITE_P(AllProposals, MissingSmcExactness,
                         ::testing::Range(0, static_cast<int>(std::size(kDatasets))),
                         [](const auto& info) { return std::string(kDatasets[info.param].name); });

// For n = 2 PostPost's weight sum_C G_C (one pair) and the race's N_C (lambda = 1) are p(x)
// itself: no Monte Carlo error, so they must match enumeration to quadrature accuracy. (Rows that
// agree where both are observed need a leaf variance > 0: fit refuses them with 0.)
TEST(MissingSmcExactness, TwoPointsPostPostAndRaceAreExact) {
  const Dataset pairs[] = {
      {"one_shared_dimension", 2, 3, 0.0, {0, kNaN, 1, 0.7, 2, kNaN}},
      {"offsets_differ", 2, 3, 0.2, {0, 0.5, kNaN, 1.2, -0.3, 0.4}},
      {"nothing_shared", 2, 2, 0.0, {0, kNaN, kNaN, 1}},
      {"one_shared_dimension_noisy", 2, 2, 0.05, {0.5, kNaN, 0.5, 3}},
  };
  for (Algorithm algorithm : {Algorithm::postpost, Algorithm::race}) {
    for (const Dataset& data : pairs) {
      FitOptions options = options_of(data, algorithm);
      options.particles = 3;
      const FitResult result = fit(table_of(data), options);
      const double exact =
          oracle::enumerate_brownian(data.x, data.n, data.d, data.leaf_variance).log_evidence;
      EXPECT_NEAR(*result.log_evidence, exact, 1e-8) << data.name << " " << to_string(algorithm);
    }
  }
}

}  // namespace
}  // namespace kingman
