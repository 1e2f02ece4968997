// The binary / multinomial model (MODEL.md section 7): encoding and its located errors, the
// equilibrium and rates, the normalized messages against Felsenstein pruning
// (tests/support/discrete_likelihood), the pair's log Z and its derivatives, and the optimal
// merge time against a dense scan.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "discrete_likelihood.hpp"
#include "kingman/error.hpp"
#include "kingman/inference/discrete_merge_time.hpp"
#include "kingman/model/discrete_data.hpp"
#include "kingman/model/discrete_messages.hpp"
#include "kingman/model/discrete_tree_likelihood.hpp"
#include "kingman/model/log_product.hpp"

namespace kingman {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Table table_of(std::size_t rows, std::size_t cols, std::vector<double> values) {
  Table t;
  t.rows = rows;
  t.cols = cols;
  t.values = std::move(values);
  t.source = "X.csv";
  return t;
}

// Random categorical table: values in 0..K-1, a fraction of entries missing.
Table random_categorical(std::size_t n, std::size_t d, std::size_t k, double missing,
                         unsigned seed) {
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<int> value(0, static_cast<int>(k) - 1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Table t = table_of(n, d, std::vector<double>(n * d));
  for (double& v : t.values) v = unit(engine) < missing ? kNaN : value(engine);
  return t;
}

// A random complete tree over n leaves with random merge heights (nondecreasing).
MergeTree random_tree(std::size_t n, unsigned seed) {
  std::mt19937_64 engine(seed);
  std::exponential_distribution<double> gap(1.0);
  std::vector<std::size_t> live(n);
  for (std::size_t i = 0; i < n; ++i) live[i] = i;
  MergeTree tree;
  tree.leaf_count = n;
  double height = 0.0;
  for (std::size_t k = 0; k + 1 < n; ++k) {
    std::uniform_int_distribution<std::size_t> pick(0, live.size() - 1);
    const std::size_t x = pick(engine);
    std::size_t y = pick(engine);
    while (y == x) y = pick(engine);
    height += gap(engine) * 2.0 / static_cast<double>(live.size() * (live.size() - 1));
    const std::size_t a = live[x], b = live[y];
    tree.merges.push_back({std::min(a, b), std::max(a, b), height});
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(std::max(x, y)));
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(std::min(x, y)));
    live.push_back(n + k);
  }
  return tree;
}

oracle::DiscreteModel oracle_model(const DiscreteData& data) {
  oracle::DiscreteModel model;
  model.n = data.n;
  model.d = data.d;
  model.categories = data.categories;
  model.values.assign(data.values.begin(), data.values.end());
  model.equilibrium = data.equilibrium;
  model.rates = data.mutation_rate;
  return model;
}

std::string error_of(const Table& table, Likelihood likelihood, const DiscreteOptions& options) {
  try {
    encode_discrete(table, likelihood, options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(DiscreteData, ValuesOutsideTheAlphabetNameRowAndColumn) {
  const DiscreteOptions options;
  const std::string two = error_of(table_of(2, 3, {0, 1, 0, 1, 2, 1}), Likelihood::binary, options);
  EXPECT_NE(two.find("X.csv, data row 2, column 2"), std::string::npos) << two;
  EXPECT_NE(two.find("value 2"), std::string::npos) << two;
  const std::string fraction =
      error_of(table_of(2, 2, {0, 1.5, 0, 1}), Likelihood::binary, options);
  EXPECT_NE(fraction.find("data row 1, column 2"), std::string::npos) << fraction;
  EXPECT_NE(fraction.find("1.5"), std::string::npos) << fraction;
  const std::string negative =
      error_of(table_of(2, 2, {0, 1, -1, 1}), Likelihood::multinomial, options);
  EXPECT_NE(negative.find("data row 2, column 1"), std::string::npos) << negative;
  DiscreteOptions three;
  three.categories = 3;
  const std::string above = error_of(table_of(2, 2, {0, 3, 2, 1}), Likelihood::multinomial, three);
  EXPECT_NE(above.find("data row 1, column 2"), std::string::npos) << above;
  EXPECT_NE(above.find("0..2"), std::string::npos) << above;
  Table named = table_of(2, 2, {0, 1, 7, 1});
  named.column_names = {"a", "b"};
  EXPECT_NE(error_of(named, Likelihood::binary, options).find("column 1 (a)"), std::string::npos);
}

TEST(DiscreteData, EncodesValuesMissingEntriesAndTheAlphabet) {
  const Table table = table_of(3, 2, {0, 2, kNaN, 1, 1, 0});
  const DiscreteData data = encode_discrete(table, Likelihood::multinomial, {});
  EXPECT_EQ(data.categories, 3u);
  EXPECT_EQ(data.value(0, 1), 2);
  EXPECT_EQ(data.value(1, 0), DiscreteData::kMissing);
  DiscreteOptions five;
  five.categories = 5;
  EXPECT_EQ(encode_discrete(table, Likelihood::multinomial, five).categories, 5u);
  EXPECT_EQ(encode_discrete(table_of(2, 1, {0, 0}), Likelihood::multinomial, {}).categories, 2u);
  EXPECT_THROW(encode_discrete(table_of(2, 1, {0, 1}), Likelihood::binary, five), OptionError);
  five.categories = 1;
  EXPECT_THROW(encode_discrete(table, Likelihood::multinomial, five), OptionError);
}

// Add-one smoothing over observed entries; a column with no observed entry is uniform.
TEST(DiscreteData, EquilibriumFromDataIsLaplaceSmoothed) {
  const Table table = table_of(4, 3, {1, 0, kNaN, 1, 2, kNaN, 0, 2, kNaN, kNaN, 2, kNaN});
  const DiscreteData data = encode_discrete(table, Likelihood::multinomial, {});
  ASSERT_EQ(data.categories, 3u);
  // Column 1: values 1, 1, 0 -> counts (1, 2, 0) + 1 over 3 + 3.
  EXPECT_DOUBLE_EQ(data.q(0)[0], 2.0 / 6.0);
  EXPECT_DOUBLE_EQ(data.q(0)[1], 3.0 / 6.0);
  EXPECT_DOUBLE_EQ(data.q(0)[2], 1.0 / 6.0);
  // Column 2: 0, 2, 2, 2 -> (1, 0, 3) + 1 over 4 + 3.
  EXPECT_DOUBLE_EQ(data.q(1)[0], 2.0 / 7.0);
  EXPECT_DOUBLE_EQ(data.q(1)[1], 1.0 / 7.0);
  EXPECT_DOUBLE_EQ(data.q(1)[2], 4.0 / 7.0);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_DOUBLE_EQ(data.q(2)[k], 1.0 / 3.0);
  EXPECT_NEAR(
      data.log_base_term(),
      2 * std::log(3.0 / 6.0) + std::log(2.0 / 6.0) + std::log(2.0 / 7.0) + 3 * std::log(4.0 / 7.0),
      1e-14);
}

TEST(DiscreteData, GivenEquilibriumAndRates) {
  const Table table = table_of(2, 2, {0, 1, 1, 1});
  DiscreteOptions options;
  options.equilibrium = parse_equilibrium("0.2");
  DiscreteData data = encode_discrete(table, Likelihood::binary, options);
  EXPECT_DOUBLE_EQ(data.q(1)[0], 0.8);
  EXPECT_DOUBLE_EQ(data.q(1)[1], 0.2);
  options.equilibrium = parse_equilibrium("uniform");
  data = encode_discrete(table, Likelihood::binary, options);
  EXPECT_DOUBLE_EQ(data.q(0)[1], 0.5);
  options.equilibrium = parse_equilibrium("0.3,0.7");
  options.mutation_rates = parse_number_list("0.5,2", "--mutation-rate");
  data = encode_discrete(table, Likelihood::binary, options);
  EXPECT_DOUBLE_EQ(data.q(0)[1], 0.7);
  EXPECT_EQ(data.mutation_rate, (std::vector<double>{0.5, 2.0}));
  EXPECT_FALSE(data.common_rate);
  options.mutation_rates = {3.0};
  EXPECT_EQ(encode_discrete(table, Likelihood::binary, options).mutation_rate,
            (std::vector<double>{3.0, 3.0}));

  auto option_error = [&](const char* equilibrium, std::vector<double> rates) {
    DiscreteOptions bad;
    bad.equilibrium = parse_equilibrium(equilibrium);
    bad.mutation_rates = std::move(rates);
    try {
      encode_discrete(table, Likelihood::binary, bad);
    } catch (const OptionError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(option_error("1", {}).find("--equilibrium"), std::string::npos);
  EXPECT_NE(option_error("0.3,0.3", {}).find("sum"), std::string::npos);
  // One tiny P(value 1) leaves P(value 0) = 1 in doubles; two given, the tiny one is refused.
  EXPECT_NE(option_error("1e-200", {}).find("rounds to 1"), std::string::npos);
  EXPECT_NE(option_error("0.99999999999,1e-200", {}).find("below the smallest accepted"),
            std::string::npos);
  EXPECT_NE(option_error("0.2,0.3,0.5", {}).find("K = 2"), std::string::npos);
  EXPECT_NE(option_error("data", {1, 2, 3}).find("--mutation-rate has 3 values"),
            std::string::npos);
  EXPECT_NE(option_error("data", {-1}).find("--mutation-rate"), std::string::npos);
  EXPECT_THROW(parse_equilibrium("half"), OptionError);
  EXPECT_THROW(parse_number_list("1,,2", "--mutation-rate"), OptionError);
  EXPECT_THROW(parse_number_list("inf", "--mutation-rate"), OptionError);
  EXPECT_THROW(parse_likelihood("poisson"), OptionError);
}

// Messages stay normalized (q . M = 1) and the tree density equals Felsenstein pruning with an
// explicit transition matrix, on random trees, with and without missing entries, binary and
// multinomial, common and per-column rates (all different, or in runs).
TEST(DiscreteMessages, TreeDensityMatchesPruning) {
  double worst = 0.0;
  for (unsigned seed = 1; seed <= 12; ++seed) {
    const std::size_t k = seed % 3 == 0 ? 4 : 2;
    const std::size_t n = 3 + 4 * seed;
    const std::size_t d = 1 + seed % 7;
    const Table table = random_categorical(n, d, k, seed % 2 ? 0.2 : 0.0, seed);
    DiscreteOptions options;
    if (seed % 4 == 1) {
      std::vector<double> rates;
      for (std::size_t j = 0; j < d; ++j) rates.push_back(0.3 + 0.5 * static_cast<double>(j));
      options.mutation_rates = rates;
    } else if (seed % 4 == 3) {
      // Runs of equal rates that change and come back (a merge reuses a rate's factors only
      // while it lasts).
      std::vector<double> rates;
      for (std::size_t j = 0; j < d; ++j) rates.push_back(j / 2 % 2 == 0 ? 0.6 : 1.7);
      options.mutation_rates = rates;
    }
    const DiscreteData data =
        encode_discrete(table, k == 2 ? Likelihood::binary : Likelihood::multinomial, options);
    const MergeTree tree = random_tree(n, seed + 100);
    const double engine = tree_density(data, tree).log_likelihood;
    const double pruning = oracle::discrete_log_likelihood(oracle_model(data))(
        oracle::history_of(tree), oracle::merge_times_of(tree));
    const double error = std::abs(engine - pruning) / std::max(1.0, std::abs(pruning));
    worst = std::max(worst, error);
    EXPECT_LE(error, 1e-12) << "seed " << seed << ": " << engine << " vs " << pruning;
    EXPECT_NEAR(tree_density(data, tree).log_joint(),
                oracle::log_joint(tree, oracle::discrete_log_likelihood(oracle_model(data))),
                1e-12 * std::max(1.0, std::abs(pruning)));

    // Replay and check the normalization of every message.
    DiscreteMessages messages(data);
    std::vector<std::size_t> slot(tree.node_count());
    for (std::size_t i = 0; i < n; ++i) slot[i] = i;
    for (std::size_t m = 0; m < tree.merges.size(); ++m) {
      const std::size_t l = slot[tree.merges[m].left], r = slot[tree.merges[m].right];
      const double t = -tree.merges[m].height;
      const DiscretePair pair(messages, l, r);
      const double predicted = pair.log_local_likelihood(t);
      EXPECT_NEAR(messages.log_local_likelihood(l, r, t), predicted, 1e-13);
      EXPECT_NEAR(messages.merge(l, r, t, r), predicted, 1e-13);
      slot[n + m] = r;
      for (std::size_t j = 0; j < d; ++j) {
        double mass = 0.0;
        for (std::size_t c = 0; c < k; ++c) mass += data.q(j)[c] * messages.message(r, j)[c];
        EXPECT_NEAR(mass, 1.0, 1e-12);
      }
    }
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", worst);
  RecordProperty("worst_relative_error", text);
}

// Two leaves that disagree cannot merge at height 0: probability 0, a log joint of -inf.
TEST(DiscreteMessages, DisagreeingLeavesAtHeightZeroHaveZeroDensity) {
  const DiscreteData data = encode_discrete(table_of(2, 1, {0, 1}), Likelihood::binary, {});
  MergeTree tree;
  tree.leaf_count = 2;
  tree.merges = {{0, 1, 0.0}};
  EXPECT_EQ(tree_density(data, tree).log_likelihood, -std::numeric_limits<double>::infinity());
  tree.merges[0].height = 0.5;
  EXPECT_TRUE(std::isfinite(tree_density(data, tree).log_joint()));
}

// A column nobody observes contributes exactly nothing.
TEST(DiscreteMessages, UnobservedColumnChangesNothing) {
  const Table base = random_categorical(9, 3, 2, 0.1, 5);
  Table padded = table_of(9, 4, {});
  for (std::size_t i = 0; i < 9; ++i) {
    for (std::size_t j = 0; j < 3; ++j) padded.values.push_back(base.at(i, j));
    padded.values.push_back(kNaN);
  }
  const MergeTree tree = random_tree(9, 77);
  const TreeDensity a = tree_density(encode_discrete(base, Likelihood::binary, {}), tree);
  const TreeDensity b = tree_density(encode_discrete(padded, Likelihood::binary, {}), tree);
  EXPECT_EQ(a.log_joint(), b.log_joint());
}

// Slope and curvature of log Z_C(t) against central differences, for pairs of clusters at
// different times.
TEST(DiscretePair, DerivativesMatchFiniteDifferences) {
  const Table table = random_categorical(6, 5, 3, 0.1, 9);
  DiscreteOptions options;
  options.mutation_rates = {0.4, 1.0, 2.5, 0.7, 1.3};
  const DiscreteData data = encode_discrete(table, Likelihood::multinomial, options);
  DiscreteMessages messages(data);
  messages.merge(0, 1, -0.3, 1);
  messages.merge(2, 3, -0.45, 3);
  for (const auto& [l, r] : {std::pair{1, 3}, std::pair{1, 4}, std::pair{4, 5}}) {
    const DiscretePair pair(messages, l, r);
    for (double depth : {1e-3, 0.05, 0.4, 2.0}) {
      const double t = pair.latest_time() - depth;
      const double h = 1e-4 * depth;
      const double slope =
          (pair.log_local_likelihood(t + h) - pair.log_local_likelihood(t - h)) / (2 * h);
      const double curvature =
          (pair.log_local_likelihood_slope(t + h) - pair.log_local_likelihood_slope(t - h)) /
          (2 * h);
      EXPECT_NEAR(pair.log_local_likelihood_slope(t), slope, 1e-6 * std::max(1.0, std::abs(slope)));
      EXPECT_NEAR(pair.log_local_likelihood_curvature(t), curvature,
                  1e-5 * std::max(1.0, std::abs(curvature)));
    }
  }
}

// log Z_C(t) with one rate is LogProduct's fold of the factors (1 - x) + x S_d, bit for bit,
// on both sides of where it multiplies them plainly (up to 28 columns, factors within [1e-5,
// 1e5]): few and many columns, huge overlaps, x next to 1; and with the times of different
// pairs interleaved, so that a kept x from the last call is never used for another time. Where
// it multiplies plainly, local_likelihood_product hands out that product, and the log elsewhere.
TEST(DiscretePair, OneRateLikelihoodIsTheFoldedProduct) {
  std::mt19937_64 engine(41);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto reference = [](const std::vector<double>& overlaps, double rate, double time_sum, double t) {
    const double y = rate * (2.0 * t - time_sum);
    const double x = std::exp(y), one_minus_x = -std::expm1(y);
    LogProduct z;
    for (const double s : overlaps) z.multiply(one_minus_x + x * s);
    return z.log();
  };
  struct Case {
    DiscretePair pair;
    std::vector<double> overlaps;
    double rate, time_sum;
  };
  std::vector<Case> cases;
  int products = 0, logs = 0;
  for (const std::size_t d : {1, 5, 20, 28, 29, 60}) {
    for (const double largest : {3.0, 1e5, 2e5, 1e60}) {
      // Two leaves (equal times: 1 - x goes to 0 with the depth, and columns that disagree
      // bring a factor of 1 - x each, which the fold must take out past 1e-150) and two
      // clusters; the largest overlap in up to three columns (past 1e150 for 1e60).
      for (const bool leaves : {true, false}) {
        std::vector<double> overlaps(d);
        for (double& s : overlaps) s = unit(engine) < 0.3 ? 0.0 : 2.5 * unit(engine);
        for (std::size_t k = 0; k < std::min<std::size_t>(3, d); ++k) overlaps[k * d / 3] = largest;
        const double rate = 0.5 + unit(engine);
        const double time_l = leaves ? 0.0 : -unit(engine), time_r = leaves ? 0.0 : -unit(engine);
        cases.push_back({DiscretePair(overlaps, std::vector<double>(d, rate), time_l, time_r),
                         overlaps, rate, time_l + time_r});
      }
    }
  }
  for (int round = 0; round < 3; ++round) {
    for (const Case& c : cases) {
      // From just below the latest time (x next to 1, 1 - x below 1e-5) to far below it.
      for (const double depth : {1e-9, 1e-6, 1e-3, 0.3, 5.0}) {
        const double t = c.pair.latest_time() - depth;
        const double expected = reference(c.overlaps, c.rate, c.time_sum, t);
        const double found = c.pair.log_local_likelihood(t);
        ASSERT_EQ(std::bit_cast<std::uint64_t>(found), std::bit_cast<std::uint64_t>(expected))
            << c.overlaps.size() << " columns, depth " << depth << ": " << found << " against "
            << expected;
        // The form PriorPost takes logs of at once: the plain product itself, or the log.
        double value = 0.0;
        if (c.pair.local_likelihood_product(t, value)) {
          ++products;
          ASSERT_TRUE(std::isnormal(value) && value > 0.0) << value;
          ASSERT_EQ(std::log(value), found) << c.overlaps.size() << " columns, depth " << depth;
        } else {
          ++logs;
          ASSERT_EQ(std::bit_cast<std::uint64_t>(value), std::bit_cast<std::uint64_t>(found));
        }
      }
    }
  }
  EXPECT_GT(products, 100);
  EXPECT_GT(logs, 100);
}

// The optimum of rate * t + log Z_C(t) against a dense scan refined by golden section, for
// common and per-column rates, leaf pairs (Z = 0 at the boundary) and pairs of clusters.
TEST(DiscreteMergeTime, OptimumMatchesADenseScan) {
  auto objective = [](const DiscretePair& pair, double rate, double t) {
    return rate * t + pair.log_local_likelihood(t);
  };
  int boundary = 0, interior = 0;
  for (unsigned seed = 1; seed <= 40; ++seed) {
    const std::size_t d = 1 + seed % 9;
    const Table table = random_categorical(5, d, 2 + seed % 3, 0.15, seed + 1000);
    DiscreteOptions options;
    if (seed % 2 == 0) {
      std::vector<double> rates;
      std::mt19937_64 engine(seed);
      std::uniform_real_distribution<double> log_rate(-2.0, 2.0);
      for (std::size_t j = 0; j < d; ++j) rates.push_back(std::exp(log_rate(engine)));
      options.mutation_rates = rates;
    }
    const DiscreteData data = encode_discrete(table, Likelihood::multinomial, options);
    DiscreteMessages messages(data);
    messages.merge(0, 1, -0.2 - 0.01 * seed, 1);
    for (const auto& [l, r] : {std::pair{2, 3}, std::pair{1, 2}, std::pair{1, 4}}) {
      const DiscretePair pair(messages, l, r);
      for (double rate : {1.0, 3.0, 10.0}) {
        const double t = optimal_merge_time(pair, rate);
        ASSERT_LE(t, pair.latest_time());
        // Dense scan over depths below the boundary, then golden section around the best.
        double best_depth = 0.0, best = objective(pair, rate, pair.latest_time());
        std::vector<double> depths = {0.0};
        for (double s = 1e-10; s < 60.0; s *= 1.01) depths.push_back(s);
        std::size_t best_index = 0;
        for (std::size_t i = 1; i < depths.size(); ++i) {
          const double v = objective(pair, rate, pair.latest_time() - depths[i]);
          if (v > best) {
            best = v;
            best_index = i;
          }
        }
        double lo = best_index == 0 ? 0.0 : depths[best_index - 1];
        double hi = depths[std::min(best_index + 1, depths.size() - 1)];
        const double g = 0.5 * (std::sqrt(5.0) - 1.0);
        for (int it = 0; it < 200 && hi - lo > 1e-15; ++it) {
          const double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
          if (objective(pair, rate, pair.latest_time() - a) >=
              objective(pair, rate, pair.latest_time() - b)) {
            hi = b;
          } else {
            lo = a;
          }
        }
        best_depth = 0.5 * (lo + hi);
        if (best_index == 0 && objective(pair, rate, pair.latest_time()) >=
                                   objective(pair, rate, pair.latest_time() - best_depth)) {
          best_depth = 0.0;
        }
        const double found = pair.latest_time() - t;
        (found == 0.0 ? boundary : interior)++;
        // Objective values agree to rounding; the optimum itself to ~sqrt(machine epsilon).
        EXPECT_GE(objective(pair, rate, t),
                  objective(pair, rate, pair.latest_time() - best_depth) - 1e-12)
            << "seed " << seed << " rate " << rate;
        EXPECT_NEAR(found, best_depth, 2e-6 * std::max(1.0, best_depth))
            << "seed " << seed << " rate " << rate;
        if (found > 0.0) {
          EXPECT_NEAR(rate + pair.log_local_likelihood_slope(t), 0.0, 1e-8);
        }
      }
    }
  }
  EXPECT_GT(boundary, 0);
  EXPECT_GT(interior, 0);
}

// Per-column rates spread over a factor 400 make some objectives bimodal (an agreeing column
// with a fast rate makes them rise again near the boundary): the optimum must still be the
// global one that a dense scan finds.
TEST(DiscreteMergeTime, PerColumnRatesFindTheGlobalMaximum) {
  std::mt19937_64 engine(5);
  std::uniform_real_distribution<double> log_rate(-3.0, 3.0), probability(0.03, 0.97);
  int bimodal = 0, cases = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const std::size_t d = 1 + engine() % 5;
    Table table = table_of(4, d, {});
    for (std::size_t i = 0; i < 4 * d; ++i)
      table.values.push_back(static_cast<double>(engine() % 2));
    DiscreteOptions options;
    options.equilibrium.kind = EquilibriumKind::given;
    options.equilibrium.probabilities = {probability(engine)};
    for (std::size_t j = 0; j < d; ++j)
      options.mutation_rates.push_back(std::exp(log_rate(engine)));
    const DiscreteData data = encode_discrete(table, Likelihood::binary, options);
    DiscreteMessages messages(data);
    messages.merge(0, 1, -0.3 * std::exp(log_rate(engine)), 1);
    for (const auto& [l, r] : {std::pair{1, 2}, std::pair{1, 3}, std::pair{2, 3}}) {
      const DiscretePair pair(messages, l, r);
      for (double rate : {0.3, 1.0, 6.0}) {
        const double latest = pair.latest_time();
        auto objective = [&](double depth) {
          return rate * (latest - depth) + pair.log_local_likelihood(latest - depth);
        };
        double best = objective(0.0), before = best, middle = objective(1e-7);
        int maxima = best > middle ? 1 : 0;
        for (double depth = 1e-7; depth < 200.0; depth *= 1.01) {
          const double after = objective(depth * 1.01);
          if (middle > before && middle > after) ++maxima;
          best = std::max(best, middle);
          before = middle;
          middle = after;
        }
        bimodal += maxima > 1;
        ++cases;
        const double t = optimal_merge_time(pair, rate);
        EXPECT_GE(rate * t + pair.log_local_likelihood(t), best - 1e-9) << "trial " << trial;
      }
    }
  }
  EXPECT_GT(bimodal, 0);
  RecordProperty("bimodal_cases", bimodal);
  RecordProperty("cases", cases);
}

}  // namespace
}  // namespace kingman
