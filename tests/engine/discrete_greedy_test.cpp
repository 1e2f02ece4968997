// The greedy family for the binary / multinomial likelihood against a brute-force greedy written
// here: long double Felsenstein pruning for Z (not the engine's normalized messages), every
// pair rescored every step (O(n^3)), and each pair's optimal merge time found by a dense scan
// of depths below the pair's boundary refined by golden section (not Newton).
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kingman/api.hpp"
#include "kingman/error.hpp"
#include "kingman/inference/discrete_greedy.hpp"
#include "kingman/model/discrete_data.hpp"
#include "kingman/model/discrete_tree_likelihood.hpp"
#include "merge_differences.hpp"

namespace kingman {
namespace {

using Real = long double;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr Real kMinusInf = -std::numeric_limits<Real>::infinity();

enum class Variant { rate1, minduration, maxprob };

struct BruteForceResult {
  MergeTree tree;
  double log_joint = 0.0;
  int near_ties = 0;  // steps at which a near-tie was resolved as the followed tree did
};

// Clusters live in slots like the engine's (the merged cluster takes the lower slot), so that
// exact ties, which discrete data makes possible at a boundary, are broken the same way: the
// first pair in (slot, slot) order.
class BruteForceGreedy {
 public:
  explicit BruteForceGreedy(const DiscreteData& data)
      : data_(data), k_(data.categories), time_(data.n, 0.0L), m_(data.n * data.d * k_, 0.0L) {
    for (std::size_t i = 0; i < data.n; ++i)
      for (std::size_t j = 0; j < data.d; ++j)
        for (std::size_t c = 0; c < k_; ++c)
          m(i, j)[c] = data.value(i, j) < 0 || data.value(i, j) == static_cast<int>(c) ? 1 : 0;
  }

  // The greedy tree. Discrete data can make two pairs tie exactly (columns with equal
  // equilibria make pairs symmetric), and then rounding decides; with `follow`, a step at which
  // the followed tree's pair scores within 1e-9 of the best takes that pair (counted in
  // near_ties), so the comparison checks that every choice is optimal up to rounding.
  BruteForceResult run(Variant variant, const MergeTree* follow = nullptr) {
    const std::size_t n = data_.n;
    std::vector<std::size_t> live(n), node(n);
    for (std::size_t i = 0; i < n; ++i) live[i] = node[i] = i;
    BruteForceResult result;
    result.tree.leaf_count = n;
    Real current = 0, log_joint = data_.log_base_term();
    for (std::size_t step = 0; step + 1 < n; ++step) {
      const Real m_live = static_cast<Real>(live.size());
      const Real lambda = m_live * (m_live - 1) / 2;
      const Real rate = variant == Variant::rate1 ? 1 : lambda;
      struct Scored {
        std::size_t a, b;
        Real score, time;
      };
      std::vector<Scored> scored;
      for (std::size_t x = 0; x < live.size(); ++x) {
        for (std::size_t y = x + 1; y < live.size(); ++y) {
          const std::size_t a = live[x], b = live[y];
          const Real t = optimum(a, b, rate);
          const Real merge_time = std::min(t, current);
          Real score = -t;  // rate1: the most recent unclamped time wins
          if (variant == Variant::minduration) score = current - t;
          if (variant == Variant::maxprob)
            score = lambda * (current - merge_time) - log_z(a, b, merge_time);
          scored.push_back({a, b, score, merge_time});
        }
      }
      Scored best = scored.front();
      for (const Scored& s : scored)
        if (s.score < best.score) best = s;
      if (follow != nullptr && step < follow->merges.size()) {
        for (const Scored& s : scored) {
          const bool same = std::min(node[s.a], node[s.b]) == follow->merges[step].left &&
                            std::max(node[s.a], node[s.b]) == follow->merges[step].right;
          if (same && (s.a != best.a || s.b != best.b) &&
              s.score - best.score <= 1e-9L * std::max(Real{1}, std::abs(best.score))) {
            best = s;
            ++result.near_ties;
          }
        }
      }
      const std::size_t best_a = best.a, best_b = best.b;
      const Real best_time = best.time;
      log_joint += -lambda * (current - best_time) + log_z(best_a, best_b, best_time);
      merge(best_a, best_b, best_time, best_a);
      result.tree.merges.push_back({std::min(node[best_a], node[best_b]),
                                    std::max(node[best_a], node[best_b]),
                                    static_cast<double>(-best_time)});
      node[best_a] = n + step;
      current = best_time;
      std::erase(live, best_b);
    }
    result.log_joint = static_cast<double>(log_joint);
    return result;
  }

 private:
  Real* m(std::size_t slot, std::size_t col) { return m_.data() + (slot * data_.d + col) * k_; }

  // q . m for a column.
  Real mass(std::size_t col, const Real* v) const {
    Real sum = 0;
    for (std::size_t c = 0; c < k_; ++c) sum += static_cast<Real>(data_.q(col)[c]) * v[c];
    return sum;
  }

  // Message up a branch of length s: P(s) m with P(s) = e^{-lambda s} I + (1 - e^{-lambda s}) 1
  // q^T.
  void upward(std::size_t col, const Real* v, Real s, Real* up) const {
    const Real stay = std::exp(-static_cast<Real>(data_.mutation_rate[col]) * s);
    const Real moved = (1 - stay) * mass(col, v);
    for (std::size_t c = 0; c < k_; ++c) up[c] = stay * v[c] + moved;
  }

  // log Z = log prod_d [ q.(u_a u_b) / (q.m_a q.m_b) ]: the evidence ratio of joining two
  // trees (one log per call: the ratios stay far inside long double's range).
  Real log_z(std::size_t a, std::size_t b, Real t) {
    Real product = 1;
    ua_.resize(k_);
    ub_.resize(k_);
    both_.resize(k_);
    for (std::size_t j = 0; j < data_.d; ++j) {
      upward(j, m(a, j), time_[a] - t, ua_.data());
      upward(j, m(b, j), time_[b] - t, ub_.data());
      for (std::size_t c = 0; c < k_; ++c) both_[c] = ua_[c] * ub_[c];
      product *= mass(j, both_.data()) / (mass(j, m(a, j)) * mass(j, m(b, j)));
    }
    return product > 0 ? std::log(product) : kMinusInf;
  }

  // The merged cluster's message into slot `into` (a or b).
  void merge(std::size_t a, std::size_t b, Real t, std::size_t into) {
    std::vector<Real> ua(k_), ub(k_);
    for (std::size_t j = 0; j < data_.d; ++j) {
      upward(j, m(a, j), time_[a] - t, ua.data());
      upward(j, m(b, j), time_[b] - t, ub.data());
      Real largest = 0;
      for (std::size_t c = 0; c < k_; ++c) largest = std::max(largest, ua[c] * ub[c]);
      for (std::size_t c = 0; c < k_; ++c) m(into, j)[c] = ua[c] * ub[c] / largest;
    }
    time_[into] = t;
  }

  // argmax over t <= min(t_a, t_b) of rate t + log Z(t): scan depths s below the boundary on a
  // dense geometric grid, refine the best cell by golden section, snap to the boundary when it
  // is at least as good.
  Real optimum(std::size_t a, std::size_t b, Real rate) {
    const Real latest = std::min(time_[a], time_[b]);
    auto f = [&](Real s) { return rate * (latest - s) + log_z(a, b, latest - s); };
    std::vector<Real> depths = {0};
    for (Real s = 1e-12L; s < 200; s *= 1.3L) depths.push_back(s);
    std::size_t best = 0;
    Real best_value = f(0);
    for (std::size_t i = 1; i < depths.size(); ++i) {
      const Real v = f(depths[i]);
      if (v > best_value) {
        best_value = v;
        best = i;
      }
    }
    Real lo = best == 0 ? 0 : depths[best - 1];
    Real hi = depths[std::min(best + 1, depths.size() - 1)];
    const Real g = (std::sqrt(5.0L) - 1) / 2;
    Real x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    Real f1 = f(x1), f2 = f(x2);
    for (int it = 0; it < 200 && hi - lo > 1e-14L * std::max(Real{1}, hi); ++it) {
      if (f1 >= f2) {
        hi = x2;
        x2 = x1;
        f2 = f1;
        x1 = hi - g * (hi - lo);
        f1 = f(x1);
      } else {
        lo = x1;
        x1 = x2;
        f1 = f2;
        x2 = lo + g * (hi - lo);
        f2 = f(x2);
      }
    }
    Real depth = (lo + hi) / 2;
    if (depth < 1e-9L && f(0) >= f(depth)) depth = 0;
    return latest - depth;
  }

  const DiscreteData& data_;
  std::size_t k_;
  std::vector<Real> time_;
  std::vector<Real> m_;  // unnormalized pruning messages, scaled to a largest entry of 1
  std::vector<Real> ua_, ub_, both_;  // scratch of log_z
};

// A table of values drawn uniformly from 0..K-1, about `missing` of them missing, from `engine`;
// rows may repeat.
Table draw_table(std::size_t n, std::size_t d, std::size_t k, double missing,
                 std::mt19937_64& engine) {
  std::uniform_int_distribution<int> value(0, static_cast<int>(k) - 1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Table t;
  t.rows = n;
  t.cols = d;
  t.source = "random";
  t.values.resize(n * d);
  for (double& v : t.values) v = unit(engine) < missing ? kNaN : value(engine);
  return t;
}

// A random table in 0..K-1 with some entries missing, redrawn until no two rows agree on every
// column both observe (such pairs merge at height 0, all tied, so the data would test the
// tie-break rule rather than the optimizer).
Table random_table(std::size_t n, std::size_t d, std::size_t k, double missing, unsigned seed) {
  std::mt19937_64 engine(seed);
  for (;;) {
    Table t = draw_table(n, d, k, missing, engine);
    bool distinct = true;
    for (std::size_t a = 0; a < n && distinct; ++a) {
      for (std::size_t b = a + 1; b < n && distinct; ++b) {
        bool agree = true;
        for (std::size_t j = 0; j < d; ++j) {
          const double x = t.at(a, j), y = t.at(b, j);
          if (!std::isnan(x) && !std::isnan(y) && x != y) agree = false;
        }
        distinct = !agree;
      }
    }
    if (distinct) return t;
  }
}

struct Case {
  Algorithm algorithm;
  Variant variant;
};

const Case kCases[] = {
    {Algorithm::greedy_rate1, Variant::rate1},
    {Algorithm::greedy_minduration, Variant::minduration},
    {Algorithm::greedy_maxprob, Variant::maxprob},
};

struct DataCase {
  const char* name;
  std::size_t n, d, k;
  double missing;
  bool per_column_rates;
  const char* equilibrium;
};

const DataCase kDataCases[] = {
    {"binary", 10, 8, 2, 0.0, false, "data"},
    {"binary, larger", 16, 12, 2, 0.0, false, "data"},
    {"binary, missing", 14, 12, 2, 0.25, false, "data"},
    {"binary, rate 0.4, q = 0.3", 12, 10, 2, 0.1, false, "0.3"},
    {"multinomial", 12, 7, 4, 0.1, false, "data"},
    {"binary, per-column rates", 12, 9, 2, 0.1, true, "data"},
    {"multinomial, per-column rates", 10, 6, 3, 0.0, true, "uniform"},
};

class DiscreteGreedyBruteForce : public ::testing::TestWithParam<DataCase> {};

TEST_P(DiscreteGreedyBruteForce, EveryVariantMatches) {
  const DataCase& dc = GetParam();
  int clamped_merges = 0, near_ties = 0;
  {
    for (unsigned seed = 1; seed <= 2; ++seed) {
      const Table table = random_table(dc.n, dc.d, dc.k, dc.missing, seed * 31 + dc.n);
      FitOptions options;
      options.likelihood = dc.k == 2 ? Likelihood::binary : Likelihood::multinomial;
      options.discrete.equilibrium = parse_equilibrium(dc.equilibrium);
      if (std::string(dc.name).find("rate 0.4") != std::string::npos) {
        options.discrete.mutation_rates = {0.4};
      }
      if (dc.per_column_rates) {
        std::mt19937_64 engine(seed);
        std::uniform_real_distribution<double> log_rate(-1.5, 1.5);
        for (std::size_t j = 0; j < dc.d; ++j)
          options.discrete.mutation_rates.push_back(std::exp(log_rate(engine)));
      }
      const DiscreteData data = encode_discrete(table, options.likelihood, options.discrete);
      for (const Case& c : kCases) {
        SCOPED_TRACE(std::string(dc.name) + ", " + to_string(c.algorithm) + ", seed " +
                     std::to_string(seed));
        options.algorithm = c.algorithm;
        const FitResult result = fit(table, options);
        const BruteForceResult reference =
            BruteForceGreedy(data).run(c.variant, &result.best_tree());
        near_ties += reference.near_ties;
        const MergeTree& tree = result.best_tree();
        ASSERT_EQ(tree.merges.size(), reference.tree.merges.size());
        for (std::size_t k = 0; k < tree.merges.size(); ++k) {
          ASSERT_EQ(tree.merges[k].left, reference.tree.merges[k].left) << "merge " << k;
          ASSERT_EQ(tree.merges[k].right, reference.tree.merges[k].right) << "merge " << k;
          EXPECT_NEAR(tree.merges[k].height, reference.tree.merges[k].height,
                      1e-7 * std::max(1.0, reference.tree.merges[k].height))
              << "merge " << k;
          if (k > 0 && tree.merges[k].height == tree.merges[k - 1].height) ++clamped_merges;
        }
        EXPECT_NEAR(result.log_joint, reference.log_joint,
                    1e-8 * std::max(1.0, std::abs(reference.log_joint)));
        EXPECT_EQ(result.log_joint, tree_density(data, tree).log_joint());
      }
    }
  }
  RecordProperty("clamped_merges", clamped_merges);
  RecordProperty("near_ties", near_ties);
}

INSTANTIATE_TEST_SUITE_P(DataCases, DiscreteGreedyBruteForce, ::testing::ValuesIn(kDataCases),
                         [](const ::testing::TestParamInfo<DataCase>& info) {
                           std::string name;
                           for (const char* c = info.param.name; *c; ++c)
                             if (std::isalnum(static_cast<unsigned char>(*c))) name += *c;
                           return name;
                         });

TEST(DiscreteGreedy, HeightsNondecreasingAndTreeValid) {
  const Table table = random_table(60, 20, 3, 0.1, 5);
  const DiscreteData data = encode_discrete(table, Likelihood::multinomial, {});
  for (const Case& c : kCases) {
    const MergeTree tree = run_greedy(data, c.algorithm);
    ASSERT_TRUE(tree.complete());
    EXPECT_NO_THROW(validate(tree));
    for (std::size_t k = 1; k < tree.merges.size(); ++k)
      EXPECT_GE(tree.merges[k].height, tree.merges[k - 1].height);
    EXPECT_TRUE(std::isfinite(tree_density(data, tree).log_joint()));
  }
}

// Identical rows merge first, at height 0 (their objective rises up to the boundary).
// The greedy algorithms score their pairs on the requested threads (generic_linkage.hpp for
// Greedy-Rate1, best_live_pair.hpp for the rescanning ones): the same tree, bit for bit, for 1,
// 2 and 4. At d = 20 a new Greedy-Rate1 row splits from about 400 partners on; the rescanning
// steps split from about 30 live clusters on.
TEST(DiscreteGreedy, SameTreeForOneTwoAndFourThreads) {
  const Table large = random_table(500, 20, 3, 0.1, 9);
  const Table small = random_table(70, 10, 3, 0.1, 10);
  for (Algorithm algorithm :
       {Algorithm::greedy_rate1, Algorithm::greedy_minduration, Algorithm::greedy_maxprob}) {
    const Table& table = algorithm == Algorithm::greedy_rate1 ? large : small;
    FitOptions options;
    options.likelihood = Likelihood::multinomial;
    options.discrete.categories = 3;
    options.algorithm = algorithm;
    options.threads = 1;
    const FitResult one = fit(table, options);
    for (int threads : {2, 4}) {
      options.threads = threads;
      const FitResult many = fit(table, options);
      EXPECT_EQ(many.threads, threads);
      EXPECT_EQ(testing_support::differing_merges(one.best_tree(), many.best_tree()), 0u)
          << to_string(algorithm) << ", " << threads << " threads";
      EXPECT_EQ(one.log_joint, many.log_joint);
    }
  }
}

// Values drawn uniformly from K categories, about `missing` of them missing; duplicate rows
// allowed (they tie at height 0, which tests the paths' tie-breaking).
Table table_with_duplicates(std::size_t n, std::size_t d, std::size_t k, double missing,
                            unsigned seed) {
  std::mt19937_64 engine(seed);
  return draw_table(n, d, k, missing, engine);
}

// Greedy-Rate1's bounded path (bounded_linkage.hpp: each cluster's k best partners, rows
// rescored when they have all merged) gives the full pair cache's tree bit for bit: binary and
// multinomial data, with missing entries and with many duplicate rows (exact ties), from one
// candidate per cluster (a rebuild at almost every merge) to the default 32, and across 1 to
// 5 blocks of the initial lists' tiles.
TEST(DiscreteGreedy, BoundedPathGivesTheFullCachesTree) {
  struct DataCase {
    Likelihood likelihood;
    std::size_t n, d, k;
    double missing;
  };
  const DataCase cases[] = {{Likelihood::binary, 40, 6, 2, 0.0},
                            {Likelihood::binary, 300, 5, 2, 0.1},
                            {Likelihood::multinomial, 190, 8, 3, 0.05},
                            {Likelihood::multinomial, 129, 20, 4, 0.2}};
  unsigned seed = 60;
  for (const DataCase& c : cases) {
    DiscreteOptions options;
    if (c.likelihood == Likelihood::multinomial) options.categories = c.k;
    const DiscreteData data = encode_discrete(
        table_with_duplicates(c.n, c.d, c.k, c.missing, ++seed), c.likelihood, options);
    const MergeTree full = greedy_rate1(data);
    for (std::size_t candidates : {1, 2, 5, 32}) {
      const MergeTree bounded = greedy_rate1_bounded(data, candidates);
      EXPECT_EQ(testing_support::differing_merges(full, bounded), 0u)
          << "n " << c.n << ", d " << c.d << ", K " << c.k << ", " << candidates << " candidates";
      ASSERT_EQ(full.merges.size(), bounded.merges.size());
      for (std::size_t m = 0; m < full.merges.size(); ++m)
        ASSERT_EQ(full.merges[m].height, bounded.merges[m].height) << "merge " << m;
    }
  }
}

// fit() takes the full cache where it fits the budget and the bounded path where it does not
// (or where asked), on any thread count the same tree, and says which it used; what fits
// nothing is refused before anything is allocated, saying what each storage needs.
TEST(DiscreteGreedy, PairStorageFollowsTheBudgetOrTheRequest) {
  const Table table = table_with_duplicates(400, 10, 2, 0.05, 71);
  const DiscreteData data = encode_discrete(table, Likelihood::binary, {});
  const std::size_t ample = std::size_t{1} << 30;
  // The pair cache takes 400 * 399 / 2 doubles (638 400 bytes); the bounded path about 400 KB.
  const std::size_t between = 550'000;
  EXPECT_EQ(greedy_rate1_storage(data, 2, ample, PairStorage::automatic), PairStorage::full);
  EXPECT_EQ(greedy_rate1_storage(data, 2, between, PairStorage::automatic), PairStorage::bounded);
  EXPECT_EQ(greedy_rate1_storage(data, 2, ample, PairStorage::bounded), PairStorage::bounded);
  try {
    greedy_rate1_storage(data, 2, between, PairStorage::full);
    ADD_FAILURE() << "the full cache was granted below its size";
  } catch (const ResourceError& e) {
    EXPECT_NE(std::string(e.what()).find("--pair-storage bounded it needs"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(greedy_rate1_storage(data, 2, 1000, PairStorage::automatic), ResourceError);

  FitOptions options;
  options.likelihood = Likelihood::binary;
  options.threads = 1;
  const FitResult full = fit(table, options);
  EXPECT_EQ(full.pair_storage, PairStorage::full);
  options.max_memory = between;
  for (int threads : {1, 2}) {
    options.threads = threads;
    const FitResult bounded = fit(table, options);
    EXPECT_EQ(bounded.pair_storage, PairStorage::bounded);
    EXPECT_EQ(testing_support::differing_merges(full.best_tree(), bounded.best_tree()), 0u)
        << threads << " threads";
    EXPECT_EQ(full.log_joint, bounded.log_joint);
  }
  options.max_memory = 1000;
  EXPECT_THROW(fit(table, options), ResourceError);

  // The rescanning variants keep no pair scores: no bounded path to ask for, and only their
  // messages to fit.
  options.max_memory = 0;
  options.algorithm = Algorithm::greedy_maxprob;
  options.pair_storage = PairStorage::bounded;
  EXPECT_THROW(fit(table, options), OptionError);
  options.pair_storage = PairStorage::automatic;
  options.max_memory = 1000;
  EXPECT_THROW(fit(table, options), ResourceError);
  EXPECT_FALSE(fit(table_with_duplicates(30, 4, 2, 0.0, 72),
                   [&] {
                     FitOptions small = options;
                     small.max_memory = 0;
                     return small;
                   }())
                   .pair_storage.has_value());
  // The binary SMC runs no greedy tree: a storage asked for there is an error, not ignored.
  options.max_memory = 0;
  options.algorithm = Algorithm::race;
  options.pair_storage = PairStorage::full;
  EXPECT_THROW(fit(table, options), OptionError);
}

TEST(DiscreteGreedy, IdenticalRowsMergeAtHeightZero) {
  Table table;
  table.rows = 4;
  table.cols = 3;
  table.source = "dup";
  table.values = {0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0};
  for (const Case& c : kCases) {
    const MergeTree tree = run_greedy(encode_discrete(table, Likelihood::binary, {}), c.algorithm);
    EXPECT_EQ(tree.merges[0].left, 0u);
    EXPECT_EQ(tree.merges[0].right, 2u);
    EXPECT_EQ(tree.merges[0].height, 0.0);
    EXPECT_FALSE(std::signbit(tree.merges[0].height));
    EXPECT_GT(tree.merges[1].height, 0.0);
  }
}

// A column nobody observes changes neither the tree nor its density.
TEST(DiscreteGreedy, FullyMissingColumnChangesNothing) {
  const Table base = random_table(20, 6, 2, 0.15, 17);
  Table padded = base;
  padded.cols = base.cols + 1;
  padded.values.clear();
  for (std::size_t i = 0; i < base.rows; ++i) {
    padded.values.push_back(kNaN);
    for (std::size_t j = 0; j < base.cols; ++j) padded.values.push_back(base.at(i, j));
  }
  for (const Case& c : kCases) {
    FitOptions options;
    options.algorithm = c.algorithm;
    options.likelihood = Likelihood::binary;
    const FitResult a = fit(base, options);
    const FitResult b = fit(padded, options);
    ASSERT_EQ(a.best_tree().merges.size(), b.best_tree().merges.size());
    for (std::size_t k = 0; k < a.best_tree().merges.size(); ++k) {
      EXPECT_EQ(a.best_tree().merges[k].left, b.best_tree().merges[k].left);
      EXPECT_EQ(a.best_tree().merges[k].right, b.best_tree().merges[k].right);
      EXPECT_EQ(a.best_tree().merges[k].height, b.best_tree().merges[k].height);
    }
    EXPECT_EQ(a.log_joint, b.log_joint);
  }
}

TEST(DiscreteGreedy, FitReportsTheModelAndRefusesWhatItCannotDo) {
  const Table table = random_table(10, 4, 2, 0.0, 3);
  FitOptions options;
  options.likelihood = Likelihood::binary;
  options.discrete.mutation_rates = {0.5, 1, 2, 4};
  const FitResult result = fit(table, options);
  EXPECT_EQ(result.likelihood, Likelihood::binary);
  EXPECT_EQ(result.categories, 2u);
  EXPECT_EQ(result.mutation_rates, (std::vector<double>{0.5, 1, 2, 4}));
  EXPECT_EQ(result.equilibrium.size(), 8u);
  EXPECT_FALSE(result.log_evidence.has_value());

  // PriorPrior, PriorPost, PostPost (tests/stats/discrete_smc_*) and the race
  // (tests/stats/discrete_race_test.cpp) run; the Brownian-only proposals are refused.
  for (Algorithm smc : {Algorithm::mpost1, Algorithm::mpost2}) {
    options.algorithm = smc;
    try {
      fit(table, options);
      ADD_FAILURE() << to_string(smc) << " did not throw";
    } catch (const OptionError& e) {
      EXPECT_NE(std::string(e.what()).find("not available"), std::string::npos) << e.what();
    }
  }
  options.algorithm = Algorithm::mgreedy;
  EXPECT_THROW(fit(table, options), OptionError);
  options.algorithm = Algorithm::greedy_rate1;
  options.brownian.leaf_variance = 0.1;
  EXPECT_THROW(fit(table, options), OptionError);

  FitOptions brownian;
  brownian.discrete.categories = 3;
  EXPECT_THROW(fit(table, brownian), OptionError);
  brownian.discrete = {};
  brownian.discrete.equilibrium = parse_equilibrium("uniform");
  EXPECT_THROW(fit(table, brownian), OptionError);
}

// A rare value at the smallest accepted equilibrium probability: its leaves carry messages of
// 1e150, whose products (1e300) stay finite, so every algorithm's results are finite; just below
// it the equilibrium is refused up front. (Found by fuzzing fit, tests/fuzz: at 1e-300 such
// leaves' merged messages overflowed and the log joint came out NaN, or a kernel threw.)
TEST(DiscreteGreedy, SmallestEquilibriumProbabilityGivesFiniteResults) {
  Table table;
  table.rows = 6;
  table.cols = 2;
  table.source = "rare";
  table.values = {1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0};  // value 1 is very unlikely a priori
  FitOptions options;
  options.likelihood = Likelihood::multinomial;
  options.discrete.categories = 3;
  options.discrete.equilibrium.kind = EquilibriumKind::given;
  options.discrete.equilibrium.probabilities = {0.5, DiscreteData::kSmallestProbability, 0.5};
  options.particles = 4;
  options.threads = 1;
  for (Algorithm algorithm :
       {Algorithm::greedy_rate1, Algorithm::greedy_minduration, Algorithm::greedy_maxprob,
        Algorithm::priorprior, Algorithm::priorpost, Algorithm::postpost, Algorithm::race}) {
    options.algorithm = algorithm;
    const FitResult result = fit(table, options);
    EXPECT_TRUE(std::isfinite(result.log_joint)) << to_string(algorithm);
    if (result.log_evidence) {
      EXPECT_TRUE(std::isfinite(*result.log_evidence)) << to_string(algorithm);
    }
    for (const Particle& particle : result.particles) {
      EXPECT_TRUE(std::isfinite(particle.weight)) << to_string(algorithm);
      for (const Merge& merge : particle.tree.merges)
        EXPECT_TRUE(std::isfinite(merge.height)) << to_string(algorithm);
    }
  }
  options.discrete.equilibrium.probabilities = {0.5, 0.5 * DiscreteData::kSmallestProbability, 0.5};
  try {
    fit(table, options);
    ADD_FAILURE() << "a probability below the smallest accepted was not refused";
  } catch (const OptionError& e) {
    EXPECT_NE(std::string(e.what()).find("--equilibrium: the probability of value 1"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kingman
