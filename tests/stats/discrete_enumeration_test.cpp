// The binary / multinomial likelihood under exact enumeration (MODEL.md sections 7 and 9).
// The pruning oracle (tests/support/discrete_likelihood) is checked on its own terms (p(x)
// sums to 1 over every data set, a missing entry is the sum over its values, closed forms for
// n = 2), and the engine's message-based tree density must agree with it on every ranked
// history of n = 3 and 4 points at random merge times.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "discrete_likelihood.hpp"
#include "exact_enumeration.hpp"
#include "kingman/model/discrete_data.hpp"
#include "kingman/model/discrete_tree_likelihood.hpp"

namespace kingman {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

oracle::DiscreteModel binary_model(std::size_t n, std::size_t d, std::vector<int> values,
                                   std::vector<double> q1, std::vector<double> rates) {
  oracle::DiscreteModel model;
  model.n = n;
  model.d = d;
  model.categories = 2;
  model.values = std::move(values);
  for (double p : q1) {
    model.equilibrium.push_back(1.0 - p);
    model.equilibrium.push_back(p);
  }
  model.rates = std::move(rates);
  return model;
}

// Every value assignment of an n x d table over K categories, as row-major vectors.
std::vector<std::vector<int>> all_tables(std::size_t cells, std::size_t k) {
  std::vector<std::vector<int>> out;
  std::vector<int> v(cells, 0);
  for (;;) {
    out.push_back(v);
    std::size_t i = 0;
    while (i < cells && ++v[i] == static_cast<int>(k)) v[i++] = 0;
    if (i == cells) return out;
  }
}

double evidence(const oracle::DiscreteModel& model) {
  return std::exp(oracle::enumerate_discrete(model).log_evidence);
}

// p(x) is a distribution over data sets: the evidences of all of them sum to 1.
TEST(DiscreteEnumeration, EvidenceSumsToOneOverAllDataSets) {
  struct Setting {
    std::size_t n, d, k;
    std::vector<double> q;  // row-major d x K
    std::vector<double> rates;
  };
  const Setting settings[] = {
      {3, 1, 2, {0.7, 0.3}, {1.0}},
      {3, 2, 2, {0.5, 0.5, 0.2, 0.8}, {0.4, 2.5}},
      {3, 1, 3, {0.2, 0.5, 0.3}, {1.7}},
      {4, 1, 2, {0.35, 0.65}, {0.8}},
  };
  double worst = 0.0;
  for (const Setting& s : settings) {
    double total = 0.0;
    for (const std::vector<int>& values : all_tables(s.n * s.d, s.k)) {
      oracle::DiscreteModel model;
      model.n = s.n;
      model.d = s.d;
      model.categories = s.k;
      model.values = values;
      model.equilibrium = s.q;
      model.rates = s.rates;
      total += evidence(model);
    }
    EXPECT_NEAR(total, 1.0, 1e-8) << "n " << s.n << " d " << s.d << " K " << s.k;
    worst = std::max(worst, std::abs(total - 1.0));
  }
  RecordProperty("worst_error_e12", static_cast<int>(std::round(worst * 1e12)));
}

// A missing entry is marginalized: the evidence is the sum over the values it could take.
TEST(DiscreteEnumeration, MissingEntryIsTheSumOverItsValues) {
  const std::vector<double> q1 = {0.3, 0.6};
  const std::vector<double> rates = {1.0, 0.5};
  double worst = 0.0;
  for (std::size_t n : {3u, 4u}) {
    std::vector<int> values = {0, 1, 1, 1, 0, 0, 1, 0};
    values.resize(n * 2);
    for (std::size_t cell : {std::size_t{1}, 2 * n - 2}) {
      std::vector<int> missing = values;
      missing[cell] = -1;
      double sum = 0.0;
      for (int v : {0, 1}) {
        std::vector<int> filled = values;
        filled[cell] = v;
        sum += evidence(binary_model(n, 2, filled, q1, rates));
      }
      const double marginal = evidence(binary_model(n, 2, missing, q1, rates));
      EXPECT_NEAR(marginal / sum, 1.0, 1e-7) << "n " << n << " cell " << cell;
      worst = std::max(worst, std::abs(marginal / sum - 1.0));
    }
  }
  RecordProperty("worst_error_e12", static_cast<int>(std::round(worst * 1e12)));
}

// n = 2 in closed form: p(x) = prod_d q_d(x_1d) q_d(x_2d) * integral of
// e^{-delta} prod_d (1 - A_d e^{-2 lambda_d delta}), A_d = 1 - S_d, expanded over subsets
// of columns: sum_U prod_{d in U} (-A_d) / (1 + 2 sum_{d in U} lambda_d).
TEST(DiscreteEnumeration, TwoPointsMatchClosedForm) {
  const std::vector<double> q1 = {0.3, 0.75, 0.5};
  const std::vector<double> rates = {0.6, 1.0, 2.2};
  double worst = 0.0;
  for (const std::vector<int>& values : all_tables(6, 2)) {
    const oracle::DiscreteModel model = binary_model(2, 3, values, q1, rates);
    double base = 1.0;
    std::vector<double> a(3);
    for (std::size_t j = 0; j < 3; ++j) {
      const double qa = values[j] ? q1[j] : 1 - q1[j];
      const double qb = values[3 + j] ? q1[j] : 1 - q1[j];
      base *= qa * qb;
      a[j] = 1.0 - (values[j] == values[3 + j] ? 1.0 / qa : 0.0);
    }
    double integral = 0.0;
    for (unsigned subset = 0; subset < 8; ++subset) {
      double term = 1.0, rate = 1.0;
      for (std::size_t j = 0; j < 3; ++j) {
        if (!(subset & (1u << j))) continue;
        term *= -a[j];
        rate += 2.0 * rates[j];
      }
      integral += term / rate;
    }
    EXPECT_NEAR(evidence(model) / (base * integral), 1.0, 1e-8);
    worst = std::max(worst, std::abs(evidence(model) / (base * integral) - 1.0));
  }
  RecordProperty("worst_error_e12", static_cast<int>(std::round(worst * 1e12)));
}

// The engine's normalized messages (with the base term) against pruning on every ranked
// history at random merge times, n = 3 and 4, with and without missing entries, binary and
// multinomial, common and per-column rates.
TEST(DiscreteEnumeration, EngineTreeDensityMatchesPruningOnEveryHistory) {
  std::mt19937_64 engine(11);
  std::exponential_distribution<double> gap(1.0);
  double worst = 0.0;
  for (std::size_t n : {3u, 4u}) {
    for (int variant = 0; variant < 4; ++variant) {
      const bool missing = variant % 2 == 1;
      const bool multinomial = variant >= 2;
      const std::size_t d = 3;
      Table table;
      table.rows = n;
      table.cols = d;
      table.source = "enumeration";
      std::uniform_int_distribution<int> value(0, multinomial ? 2 : 1);
      for (std::size_t c = 0; c < n * d; ++c)
        table.values.push_back(missing && c % 4 == 1 ? kNaN : value(engine));
      DiscreteOptions options;
      if (variant % 3 == 0) options.mutation_rates = {0.5, 1.5, 3.0};
      const DiscreteData data = encode_discrete(
          table, multinomial ? Likelihood::multinomial : Likelihood::binary, options);
      oracle::DiscreteModel model;
      model.n = n;
      model.d = d;
      model.categories = data.categories;
      model.values.assign(data.values.begin(), data.values.end());
      model.equilibrium = data.equilibrium;
      model.rates = data.mutation_rate;
      const oracle::LogLikelihood pruning = oracle::discrete_log_likelihood(model);
      for (const oracle::History& history : oracle::all_histories(n)) {
        MergeTree tree;
        tree.leaf_count = n;
        double height = 0.0;
        for (const auto& [a, b] : history) {
          height += gap(engine);
          tree.merges.push_back({static_cast<std::size_t>(a), static_cast<std::size_t>(b), height});
        }
        const double expected = oracle::log_joint(tree, pruning);
        const double actual = tree_density(data, tree).log_joint();
        const double error = std::abs(actual - expected) / std::max(1.0, std::abs(expected));
        worst = std::max(worst, error);
        EXPECT_LE(error, 1e-10) << "n " << n << " variant " << variant;
      }
    }
  }
  RecordProperty("worst_error_e15", static_cast<int>(std::round(worst * 1e15)));
}

// A column nobody observes changes nothing, and two equal rows make their pair the likeliest
// first merge.
TEST(DiscreteEnumeration, UnobservedColumnAndEqualRows) {
  const std::vector<int> values = {1, 0, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1};  // 4 x 3
  const oracle::DiscreteModel base = binary_model(4, 3, values, {0.4, 0.5, 0.6}, {1, 1, 1});
  oracle::DiscreteModel padded = binary_model(4, 4, {}, {0.4, 0.5, 0.6, 0.5}, {1, 1, 1, 1});
  for (std::size_t i = 0; i < 4; ++i) {
    for (std::size_t j = 0; j < 3; ++j) padded.values.push_back(values[i * 3 + j]);
    padded.values.push_back(-1);
  }
  const oracle::Enumeration a = oracle::enumerate_discrete(base);
  const oracle::Enumeration b = oracle::enumerate_discrete(padded);
  EXPECT_NEAR(a.log_evidence, b.log_evidence, 1e-9);
  // Rows 0 and 3 are equal (1, 0, 1).
  std::pair<int, int> best{-1, -1};
  double best_p = 0.0;
  for (const auto& [pair, p] : a.first_merge_posterior) {
    if (p > best_p) {
      best_p = p;
      best = pair;
    }
  }
  EXPECT_EQ(best, (std::pair<int, int>{0, 3}));
}

}  // namespace
}  // namespace kingman
