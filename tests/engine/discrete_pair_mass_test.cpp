// The Gauss-Jacobi pair masses of the binary / multinomial model (engine/src/model/
// discrete_pair_mass.hpp) against the adaptive quadrature of DiscreteDurationLaw (itself tested
// against closed forms in discrete_duration_law_test.cpp) over random pairs of up to 300
// columns, and against the Beta integral that columns which all disagree at x0 = 1 reduce to,
// up to 500 columns where the mass spans hundreds of orders of magnitude; quantiles against the
// adaptive law's upper mass.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "../../engine/src/model/discrete_duration_law.hpp"
#include "../../engine/src/model/discrete_pair_mass.hpp"
#include "kingman/error.hpp"
#include "kingman/kernels/vector_math.hpp"

namespace kingman {
namespace {

// A random pair: overlaps of disagreeing leaves (0), agreeing ones (1 / q), columns that cannot
// tell (1) and clusters (0 to 3); leaves at time 0 or clusters at earlier times; the mutation
// rate 1 or drawn from [0.2, 4].
struct RandomPair {
  std::vector<double> overlaps;
  double mutation_rate = 1.0, time_l = 0.0, time_r = 0.0;

  DiscretePair pair() const {
    return DiscretePair(overlaps, std::vector<double>(overlaps.size(), mutation_rate), time_l,
                        time_r);
  }
};

RandomPair random_pair(std::mt19937_64& engine, std::size_t d, bool leaves, bool unit_rate) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  RandomPair p;
  p.mutation_rate = unit_rate ? 1.0 : std::exp(std::log(0.2) + 3.0 * unit(engine));
  p.overlaps.resize(d);
  for (double& s : p.overlaps) {
    const double kind = unit(engine);
    s = kind < 0.3   ? 0.0
        : kind < 0.6 ? 1.0 / (0.05 + 0.9 * unit(engine))
        : kind < 0.7 ? 1.0
                     : (leaves ? 0.0 : 3.0 * unit(engine));
  }
  p.time_l = leaves ? 0.0 : -std::exp(-5.0 + 6.0 * unit(engine));
  p.time_r = leaves ? 0.0 : -std::exp(-5.0 + 6.0 * unit(engine));
  return p;
}

TEST(DiscretePairMass, AgreesWithTheAdaptiveQuadrature) {
  std::mt19937_64 engine(3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  double worst = 0.0;
  for (int trial = 0; trial < 1600; ++trial) {
    // The last 100 pairs have 100 to 300 columns (rules of up to 151 nodes).
    const std::size_t d = trial < 1500 ? engine() % 41 : 100 + engine() % 201;
    const RandomPair random = random_pair(engine, d, trial % 4 == 0, trial % 3 == 0);
    const double mutation_rate = random.mutation_rate;
    const double latest = std::min(random.time_l, random.time_r);
    const double start = unit(engine) < 0.3 ? latest : latest - std::exp(-6.0 + 6.0 * unit(engine));
    const double m = std::floor(2.0 + 600.0 * unit(engine) * unit(engine));
    const double rate = 0.5 * m * (m - 1.0);
    const DiscretePair pair = random.pair();
    const DiscretePairMasses masses(rate, mutation_rate, std::max<std::size_t>(d, 40));
    ASSERT_TRUE(masses.handles(pair));
    const double quadrature = DiscreteDurationLaw(pair, rate, start).log_mass();
    const double gauss_jacobi = masses.log_mass(pair, start);
    const double error = std::abs(gauss_jacobi - quadrature);
    worst = std::max(worst, error);
    ASSERT_LT(error, 1e-12) << "trial " << trial << " d " << d << " rate " << rate
                            << " mutation rate " << mutation_rate;
  }
  RecordProperty("worst_log_difference", std::to_string(worst / 1e-16) + "e-16");
}

// Columns that all disagree (S = 0) at x0 = 1: P(v) = (1 - v)^D and
// G = B(beta, D + 1) / (2 lambda_c) = D! / (beta (beta + 1) ... (beta + D)) / (2 lambda_c).
TEST(DiscretePairMass, DisagreeingLeavesGiveTheBetaIntegral) {
  for (std::size_t d : {1, 2, 10, 100, 500}) {
    for (double rate : {1.0, 6.0, 2e4, 2e7}) {
      const double mutation_rate = 1.0;
      const double beta = rate / (2.0 * mutation_rate);
      const DiscretePair pair(std::vector<double>(d, 0.0), std::vector<double>(d, mutation_rate),
                              0.0, 0.0);
      const DiscretePairMasses masses(rate, mutation_rate, d);
      ASSERT_TRUE(masses.handles(pair));
      long double exact =
          -std::log(2.0L * mutation_rate) - std::log(static_cast<long double>(beta));
      for (std::size_t i = 1; i <= d; ++i)
        exact +=
            std::log(static_cast<long double>(i)) - std::log(beta + static_cast<long double>(i));
      const double found = masses.log_mass(pair, 0.0);
      EXPECT_NEAR(found, static_cast<double>(exact), 1e-14 * static_cast<double>(d) * 20.0 + 1e-14)
          << "D " << d << " rate " << rate << " (log G = " << static_cast<double>(exact) << ")";
    }
  }
}

// Quantiles: the adaptive law's upper mass at the returned duration is (1 - u) of its mass, to
// 1e-12 relative, over random pairs and u from 2^-10 to 1 - 1e-12; below 2^-10 it declines.
// (Some of these laws make plain Newton steps cycle between a flat stretch and the tail.)
TEST(DiscretePairMass, QuantilesInvertTheUpperMass) {
  std::mt19937_64 engine(8);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  double worst = 0.0;
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t d = 1 + engine() % 30;
    const RandomPair random = random_pair(engine, d, trial % 3 == 0, trial % 2 == 0);
    const double mutation_rate = random.mutation_rate;
    const double start =
        std::min(random.time_l, random.time_r) - (unit(engine) < 0.5 ? 0.0 : 0.1 * unit(engine));
    const double rate = trial % 4 == 0 ? 1.0 : 0.5 * (2.0 + trial % 50) * (1.0 + trial % 50);
    const DiscretePair pair = random.pair();
    const DiscretePairMasses masses(rate, mutation_rate, 30);
    const DiscreteDurationLaw law(pair, rate, start);
    const double log_mass = masses.log_mass(pair, start);
    const double drawn = 0x1p-10 + (1.0 - 0x1p-10) * unit(engine);
    for (double u : {0x1p-10, 0.01, 0.3, 0.5, 0.77, 0.99, 1.0 - 1e-7, 1.0 - 1e-12, drawn}) {
      const double delta = masses.quantile(pair, start, log_mass, u);
      ASSERT_GE(delta, 0.0) << "trial " << trial << " u " << u;
      const double upper_share = std::exp(law.log_upper(delta) - law.log_mass());
      const double error = std::abs(upper_share - (1.0 - u)) / (1.0 - u);
      worst = std::max(worst, error);
      ASSERT_LT(error, 1e-12) << "trial " << trial << " u " << u << " delta " << delta;
    }
    EXPECT_TRUE(std::isnan(masses.quantile(pair, start, log_mass, 0x1p-11)));
  }
  RecordProperty("worst_relative_error", std::to_string(worst / 1e-16) + "e-16");
}

// mass_sum, which PostPost calls to take the logs of a row of pairs at once: where it returns a
// sum, log S + log_scale() is log_mass's value bit for bit (log_mass is that with libm's log) and
// log_array's within its error bound; where it returns the log itself, that is log_mass's value.
// Both kinds occur: sums in range, and the 500-column pairs whose products are folded into logs.
TEST(DiscretePairMass, SumsLeftToTheCallerGiveTheMass) {
  std::mt19937_64 engine(21);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int sums = 0, logs = 0;
  for (int trial = 0; trial < 540; ++trial) {
    const std::size_t d = trial < 500 ? 1 + engine() % 40 : 400 + engine() % 101;
    const RandomPair random = random_pair(engine, d, trial % 2 == 0, trial % 3 == 0);
    const double start = std::min(random.time_l, random.time_r) - 0.1 * unit(engine);
    const double m = std::floor(2.0 + 300.0 * unit(engine));
    const DiscretePairMasses masses(0.5 * m * (m - 1.0), random.mutation_rate,
                                    std::max<std::size_t>(d, 40));
    const DiscretePair pair = random.pair();
    const double log_mass = masses.log_mass(pair, start);
    double value = std::numeric_limits<double>::quiet_NaN();
    if (masses.mass_sum(pair, start, value)) {
      ++sums;
      ASSERT_TRUE(std::isnormal(value) && value > 1e-280) << "trial " << trial << ": " << value;
      ASSERT_EQ(std::log(value) + masses.log_scale(), log_mass) << "trial " << trial;
      double batched = value;
      kernels::log_array(&batched, &batched, 1);
      ASSERT_NEAR(batched + masses.log_scale(), log_mass, 8e-16 * std::max(1.0, std::abs(log_mass)))
          << "trial " << trial;
    } else {
      ++logs;
      ASSERT_EQ(value, log_mass) << "trial " << trial;
    }
  }
  EXPECT_GT(sums, 300);
  EXPECT_GT(logs, 10);
}

TEST(DiscretePairMass, HandlesOnlyItsRateAndSize) {
  const DiscretePairMasses masses(3.0, 1.0, 4);
  EXPECT_TRUE(masses.handles(DiscretePair({0.0, 2.0}, {1.0, 1.0}, 0.0, 0.0)));
  EXPECT_TRUE(masses.handles(DiscretePair({}, {}, 0.0, 0.0)));
  EXPECT_FALSE(masses.handles(DiscretePair({0.0, 2.0}, {1.0, 2.0}, 0.0, 0.0)));  // per column
  EXPECT_FALSE(masses.handles(DiscretePair({0.0, 2.0}, {2.0, 2.0}, 0.0, 0.0)));  // other rate
  EXPECT_FALSE(masses.handles(DiscretePair(std::vector<double>(5, 0.0), std::vector<double>(5, 1.0),
                                           0.0, 0.0)));  // more columns than built for
  // With no shared column the law is exponential: G = 1 / lambda.
  EXPECT_NEAR(masses.log_mass(DiscretePair({}, {}, -0.5, -0.2), -0.7), -std::log(3.0), 1e-15);
  EXPECT_THROW(DiscretePairMasses(0.0, 1.0, 4), OptionError);
  EXPECT_FALSE(DiscretePairMasses::supports(1.0, 1e300));   // beta - 1 rounds to -1
  EXPECT_FALSE(DiscretePairMasses::supports(1e30, 1e-30));  // beta beyond 2^50
  EXPECT_TRUE(DiscretePairMasses::supports(2e9, 1e-3));
  EXPECT_THROW(DiscretePairMasses(1.0, 1e300, 4), OptionError);
  EXPECT_THROW(masses.quantile(DiscretePair({0.0}, {1.0}, 0.0, 0.0), 0.0, 0.0, 1.0), OptionError);
  EXPECT_THROW(DiscretePairMasses(1.0, -1.0, 4), OptionError);
}

}  // namespace
}  // namespace kingman
