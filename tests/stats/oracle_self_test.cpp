// Self tests of the test oracles (tests/support): exact enumeration against closed forms, an
// independent quadrature and Monte Carlo from the prior; brute-force greedy against hand
// computation and an independent recomputation of log p(x, tree).
#include <gtest/gtest.h>

#include <boost/math/quadrature/exp_sinh.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "../support/brute_force_greedy.hpp"
#include "../support/exact_enumeration.hpp"

namespace kingman::oracle {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double rel_diff_log(double log_a, double log_b) {
  return std::abs(std::expm1(log_a - log_b));
}

// ---------------------------------------------------------------------------------------------
// Enumeration bookkeeping.

TEST(OracleEnumeration, HistoryCounts) {
  EXPECT_EQ(all_histories(1).size(), 1u);
  EXPECT_EQ(all_histories(2).size(), 1u);
  EXPECT_EQ(all_histories(3).size(), 3u);
  EXPECT_EQ(all_histories(4).size(), 18u);
  EXPECT_EQ(all_histories(5).size(), 180u);
}

TEST(OracleEnumeration, CanonicalTopology) {
  EXPECT_EQ(canonical_topology(4, {{2, 3}, {0, 1}, {4, 5}}), "((0,1),(2,3))");
  EXPECT_EQ(canonical_topology(4, {{0, 1}, {2, 3}, {4, 5}}), "((0,1),(2,3))");
  EXPECT_EQ(canonical_topology(3, {{1, 2}, {0, 3}}), "(0,(1,2))");
  EXPECT_EQ(canonical_topology(3, {{0, 2}, {1, 3}}), "((0,2),1)");
  MergeTree tree;
  tree.leaf_count = 4;
  tree.merges = {{3, 1, 0.5}, {0, 4, 1.0}, {2, 5, 2.0}};
  EXPECT_EQ(canonical_topology(tree), "((0,(1,3)),2)");
  EXPECT_EQ(history_of(tree), (History{{1, 3}, {0, 4}, {2, 5}}));
  EXPECT_EQ(merge_times_of(tree), (std::vector<double>{-0.5, -1.0, -2.0}));
  EXPECT_THROW(canonical_topology(3, {{0, 1}, {0, 2}}), std::invalid_argument);
}

TEST(OracleEnumeration, PriorDensity) {
  // n = 4: lambdas 6, 3, 1.
  EXPECT_DOUBLE_EQ(log_prior_density(4, {-0.5, -1.0, -3.0}), -6 * 0.5 - 3 * 0.5 - 1 * 2.0);
  EXPECT_THROW(log_prior_density(4, {-0.5, -0.25, -3.0}), std::invalid_argument);
}

// A likelihood of 1 leaves the prior: the evidence is 1 and posteriors are the prior's.
TEST(OracleEnumeration, FlatLikelihoodGivesThePrior) {
  const LogLikelihood flat = [](const History&, const std::vector<double>&) { return 0.0; };
  for (std::size_t n : {2u, 3u, 4u}) {
    const Enumeration e = enumerate_exact(n, flat);
    EXPECT_NEAR(e.log_evidence, 0.0, 1e-11) << "n = " << n;
  }
  const Enumeration e = enumerate_exact(4, flat);
  ASSERT_EQ(e.first_merge_posterior.size(), 6u);
  for (const auto& [pair, p] : e.first_merge_posterior) EXPECT_NEAR(p, 1.0 / 6.0, 1e-11);
  ASSERT_EQ(e.topology_posterior.size(), 15u);
  for (const auto& [topology, p] : e.topology_posterior) {
    const bool balanced = topology.starts_with("((") && topology.ends_with("))") &&
                          topology.find("),(") != std::string::npos;
    EXPECT_NEAR(p, balanced ? 1.0 / 9.0 : 1.0 / 18.0, 1e-11) << topology;
  }
}

// log p(x | history, t) = a * sum_k t_k: every duration integral is exponential, so
// p(x) = #histories * prod_j 1 / (lambda_j + a (n - j)).
TEST(OracleEnumeration, LinearLogLikelihoodClosedForm) {
  const double a = 0.7;
  const LogLikelihood linear = [a](const History&, const std::vector<double>& t) {
    double s = 0.0;
    for (double tk : t) s += a * tk;
    return s;
  };
  for (std::size_t n : {3u, 4u}) {
    double expected = std::log(static_cast<double>(all_histories(n).size()));
    for (std::size_t j = 1; j < n; ++j) {
      const double m = static_cast<double>(n - j + 1);
      expected -= std::log(0.5 * m * (m - 1.0) + a * static_cast<double>(n - j));
    }
    const Enumeration e = enumerate_exact(n, linear);
    EXPECT_LT(rel_diff_log(e.log_evidence, expected), 1e-10) << "n = " << n;
  }
}

// ---------------------------------------------------------------------------------------------
// n = 2 closed form, (4 pi)^(-d/2) 2 (eps/4)^(p/2) K_p(sqrt(eps)), including sharp peaks.

TEST(OracleEnumeration, TwoPointsMatchClosedForm) {
  for (std::size_t d : {1u, 2u, 3u, 5u}) {
    for (double eps : {1e-4, 1e-2, 1.0, 9.0, 100.0}) {
      std::vector<double> x(2 * d, 0.0);
      for (std::size_t j = 0; j < d; ++j) x[d + j] = std::sqrt(eps / static_cast<double>(d));
      const Enumeration e = enumerate_brownian(x, 2, d, 0.0);
      EXPECT_LT(rel_diff_log(e.log_evidence, log_evidence_two_points(eps, d)), 1e-9)
          << "d = " << d << ", eps = " << eps;
    }
  }
}

// A missing entry contributes nothing in its dimension: the closed form in the other dims.
TEST(OracleEnumeration, MissingEntriesDropTheirDimension) {
  const std::vector<double> x = {0.0, kNaN, 0.0, 0.3, 0.5, -0.4};
  const double eps = 0.3 * 0.3 + 0.4 * 0.4;
  const Enumeration e = enumerate_brownian(x, 2, 3, 0.0);
  EXPECT_LT(rel_diff_log(e.log_evidence, log_evidence_two_points(eps, 2)), 1e-9);

  // A column missing everywhere changes nothing, for n = 3 as well.
  const std::vector<double> with_column = {0.0, kNaN, 1.0, 0.2, kNaN, 0.1, 1.0, kNaN, -1.0};
  const std::vector<double> without = {0.0, 1.0, 0.2, 0.1, 1.0, -1.0};
  const Enumeration a = enumerate_brownian(with_column, 3, 3, 0.1);
  const Enumeration b = enumerate_brownian(without, 3, 2, 0.1);
  EXPECT_LT(rel_diff_log(a.log_evidence, b.log_evidence), 1e-12);
}

TEST(OracleEnumeration, RejectsDuplicatesWithoutLeafVariance) {
  const std::vector<double> x = {0.0, 1.0, 0.0, 1.0, 2.0, 2.0};
  EXPECT_THROW(enumerate_brownian(x, 3, 2, 0.0), std::invalid_argument);
  EXPECT_NO_THROW(enumerate_brownian(x, 3, 2, 0.05));
}

// ---------------------------------------------------------------------------------------------
// Posteriors.

TEST(OracleEnumeration, PosteriorsSumToOneAndFavourTheClosePair) {
  const std::vector<double> x = {0.0, 0.0, 0.05, -0.02, 1.0, 0.8};
  const Enumeration e = enumerate_brownian(x, 3, 2, 0.0);
  double sum = 0.0, best = 0.0;
  std::pair<int, int> argmax{-1, -1};
  for (const auto& [pair, p] : e.first_merge_posterior) {
    sum += p;
    if (p > best) {
      best = p;
      argmax = pair;
    }
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_EQ(argmax, (std::pair<int, int>{0, 1}));
  EXPECT_GT(best, 0.8);
  double topo_sum = 0.0;
  for (const auto& [topology, p] : e.topology_posterior) topo_sum += p;
  EXPECT_NEAR(topo_sum, 1.0, 1e-12);

  // n = 4: two tight pairs far apart.
  const std::vector<double> y = {0.0, 0.0, 0.1, 0.0, 3.0, 3.0, 3.0, 3.1};
  const Enumeration f = enumerate_brownian(y, 4, 2, 0.0);
  double s4 = 0.0;
  for (const auto& [pair, p] : f.first_merge_posterior) s4 += p;
  EXPECT_NEAR(s4, 1.0, 1e-12);
  EXPECT_GT(f.topology_posterior.at("((0,1),(2,3))"), 0.95);
  double hist_sum = 0.0;
  for (const HistoryMass& h : f.histories) hist_sum += std::exp(h.log_mass - f.log_evidence);
  EXPECT_NEAR(hist_sum, 1.0, 1e-12);
}

TEST(OracleEnumeration, ThreadsGiveTheSameAnswer) {
  const std::vector<double> x = {0.0, 0.0, 0.4, -0.2, 1.0, 0.8, -0.5, 0.3};
  EnumerationOptions one, many;
  many.threads = 3;
  const Enumeration a = enumerate_brownian(x, 4, 2, 0.02, one);
  const Enumeration b = enumerate_brownian(x, 4, 2, 0.02, many);
  EXPECT_EQ(a.log_evidence, b.log_evidence);
  ASSERT_EQ(a.histories.size(), b.histories.size());
  for (std::size_t i = 0; i < a.histories.size(); ++i)
    EXPECT_EQ(a.histories[i].log_mass, b.histories[i].log_mass);
}

// ---------------------------------------------------------------------------------------------
// n = 3 checked two other ways, with the joint density written out by hand here.

struct ThreePoints {
  std::vector<double> x;  // 3 x d
  std::size_t d;
  double v0;

  // Squared distances of the history "(a,b) first, then c": |x_a - x_b|^2 and
  // |x_c - (x_a + x_b)/2|^2 (the merged mean is the plain average: equal leaf variances).
  std::pair<double, double> distances(int a, int b, int c) const {
    double e1 = 0.0, e2 = 0.0;
    for (std::size_t j = 0; j < d; ++j) {
      const double xa = x[a * d + j], xb = x[b * d + j], xc = x[c * d + j];
      e1 += (xa - xb) * (xa - xb);
      e2 += (xc - 0.5 * (xa + xb)) * (xc - 0.5 * (xa + xb));
    }
    return {e1, e2};
  }
  // log p(x | (a,b) at -delta1, then c with (a,b) at -(delta1 + delta2)).
  double log_likelihood(std::pair<double, double> eps, double delta1, double delta2) const {
    const double dd = static_cast<double>(d);
    const double two_pi = 2.0 * std::numbers::pi;
    const double s1 = 2.0 * (v0 + delta1);  // two leaves
    const double log_z1 = -0.5 * dd * std::log(two_pi * s1) - eps.first / (2.0 * s1);
    const double s2 = (v0 + delta1 + delta2) + (0.5 * (v0 + delta1) + delta2);  // leaf + pair
    const double log_z2 = -0.5 * dd * std::log(two_pi * s2) - eps.second / (2.0 * s2);
    return log_z1 + log_z2;
  }
};

const int kTriples[3][3] = {{0, 1, 2}, {0, 2, 1}, {1, 2, 0}};

TEST(OracleEnumeration, ThreePointsMatchIndependentQuadrature) {
  for (double v0 : {0.05, 0.0}) {
    const ThreePoints tp{{0.0, 0.0, 0.3, 0.1, -0.6, 0.9}, 2, v0};
    const Enumeration e = enumerate_brownian(tp.x, 3, 2, v0);
    boost::math::quadrature::exp_sinh<double> outer, inner;
    for (const auto& tri : kTriples) {
      const auto eps = tp.distances(tri[0], tri[1], tri[2]);
      const auto joint = [&](double d1) {
        return inner.integrate(
            [&](double d2) { return std::exp(-3.0 * d1 - d2 + tp.log_likelihood(eps, d1, d2)); },
            1e-13);
      };
      const double mass = outer.integrate(joint, 1e-12);
      const HistoryMass* found = nullptr;
      for (const HistoryMass& h : e.histories)
        if (h.merges.front() == std::pair<int, int>{tri[0], tri[1]}) found = &h;
      ASSERT_NE(found, nullptr);
      EXPECT_LT(rel_diff_log(found->log_mass, std::log(mass)), 1e-8)
          << "v0 = " << v0 << ", first merge " << tri[0] << "," << tri[1];
    }
  }
}

// Plain Monte Carlo from the coalescent prior: the mean likelihood estimates p(x).
TEST(OracleEnumeration, ThreePointsMatchMonteCarloFromThePrior) {
  for (double v0 : {0.0, 0.1}) {
    const ThreePoints tp{{0.0, 0.0, 0.4, 0.2, -0.5, 0.7}, 2, v0};
    std::mt19937_64 rng(20240611u + static_cast<unsigned>(v0 * 10));
    std::exponential_distribution<double> exp3(3.0), exp1(1.0);
    std::uniform_int_distribution<int> pick(0, 2);
    std::pair<double, double> eps[3];
    for (int k = 0; k < 3; ++k)
      eps[k] = tp.distances(kTriples[k][0], kTriples[k][1], kTriples[k][2]);
    const int draws = 200000;
    double sum = 0.0, sum_sq = 0.0;
    for (int i = 0; i < draws; ++i) {
      const double d1 = exp3(rng);
      const int k = pick(rng);
      const double d2 = exp1(rng);
      const double lik = std::exp(tp.log_likelihood(eps[k], d1, d2));
      sum += lik;
      sum_sq += lik * lik;
    }
    const double mean = sum / draws;
    const double se = std::sqrt((sum_sq / draws - mean * mean) / draws);
    const double exact = std::exp(enumerate_brownian(tp.x, 3, 2, v0).log_evidence);
    EXPECT_LT(se / exact, 0.02) << "the Monte Carlo check is too weak to mean anything";
    EXPECT_LT(std::abs(mean - exact), 4.0 * se)
        << "v0 = " << v0 << ": exact " << exact << ", MC " << mean << " +- " << se;
  }
}

// ---------------------------------------------------------------------------------------------
// Brute-force greedy.

std::vector<double> random_points(std::size_t n, std::size_t d, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> x(n * d);
  for (double& v : x) v = normal(rng);
  return x;
}

TEST(OracleGreedy, HeightsNondecreasingAndLogJointRecomputed) {
  const Variant variants[] = {Variant::rate1, Variant::minduration, Variant::maxprob,
                              Variant::mgreedy};
  for (std::size_t d : {1u, 3u}) {
    for (double v0 : {0.0, 0.2}) {
      const std::size_t n = 12;
      const std::vector<double> x = random_points(n, d, 7u + static_cast<unsigned>(d));
      const LogLikelihood ll = brownian_log_likelihood(x, n, d, v0);
      for (Variant v : variants) {
        const GreedyReference g = brute_force_greedy(x, n, d, v0, v);
        ASSERT_TRUE(g.tree.complete());
        std::vector<char> used(2 * n - 1, 0);
        double last = 0.0;
        for (std::size_t k = 0; k < g.tree.merges.size(); ++k) {
          const Merge& m = g.tree.merges[k];
          EXPECT_LT(m.left, m.right);
          EXPECT_LT(m.right, n + k);
          EXPECT_FALSE(used[m.left] || used[m.right]);
          used[m.left] = used[m.right] = 1;
          EXPECT_GE(m.height, last);
          last = m.height;
        }
        const double recomputed = log_joint(g.tree, ll);
        EXPECT_NEAR(g.log_joint, recomputed, 1e-10 * std::max(1.0, std::abs(recomputed)))
            << "variant " << static_cast<int>(v) << ", d = " << d << ", v0 = " << v0;
      }
    }
  }
}

// Rate1 on x = {0, 1, 3} (d = 1, v0 = 0), by hand: u(eps) = (sqrt(1 + 4 eps) - 1) / 2 and the
// pair (0,1) proposes t = -u(1)/2, the most recent. Then node 3 = {mean 1/2, v = -t1/2, t1}
// meets leaf 2 at t2 = (v + t1 - u(6.25)) / 2.
TEST(OracleGreedy, Rate1HandComputed) {
  const GreedyReference g = brute_force_greedy({0.0, 1.0, 3.0}, 3, 1, 0.0, Variant::rate1);
  const double u1 = 0.5 * (std::sqrt(5.0) - 1.0);
  const double t1 = -0.5 * u1;
  const double v3 = -0.5 * t1;
  const double u2 = 0.5 * (std::sqrt(26.0) - 1.0);
  const double t2 = 0.5 * (v3 + t1 - u2);
  ASSERT_EQ(g.tree.merges.size(), 2u);
  EXPECT_EQ(g.tree.merges[0].left, 0u);
  EXPECT_EQ(g.tree.merges[0].right, 1u);
  EXPECT_NEAR(g.tree.merges[0].height, -t1, 1e-14);
  EXPECT_EQ(g.tree.merges[1].left, 2u);
  EXPECT_EQ(g.tree.merges[1].right, 3u);
  EXPECT_NEAR(g.tree.merges[1].height, -t2, 1e-14);
  const double s1 = -2.0 * t1;             // both leaves
  const double s2 = -t2 + (v3 + t1 - t2);  // leaf 2 + node 3
  EXPECT_NEAR(s2, u2, 1e-14);              // s = u at the lambda = 1 optimum
  const double log_z1 = -0.5 * std::log(2.0 * std::numbers::pi * s1) - 1.0 / (2.0 * s1);
  const double log_z2 = -0.5 * std::log(2.0 * std::numbers::pi * s2) - 6.25 / (2.0 * s2);
  const double expected = -3.0 * (-t1) + log_z1 - 1.0 * (t1 - t2) + log_z2;
  EXPECT_NEAR(g.log_joint, expected, 1e-13);
}

// n = 2: every variant merges at its closed-form duration.
TEST(OracleGreedy, TwoPointsDurations) {
  const double eps = 2.0, d = 2.0;
  const std::vector<double> x = {0.0, 0.0, 1.0, 1.0};
  const double teh = (std::sqrt(d * d + 4.0 * eps) - d) / 4.0;  // lambda = 1
  const double henao = (0.0 + std::sqrt(eps)) / 2.0;            // lambda~ = 1 - d/2 = 0
  EXPECT_NEAR(brute_force_greedy(x, 2, 2, 0.0, Variant::minduration).tree.merges[0].height, teh,
              1e-14);
  EXPECT_NEAR(brute_force_greedy(x, 2, 2, 0.0, Variant::maxprob).tree.merges[0].height, teh, 1e-14);
  EXPECT_NEAR(brute_force_greedy(x, 2, 2, 0.0, Variant::rate1).tree.merges[0].height, teh, 1e-14);
  EXPECT_NEAR(brute_force_greedy(x, 2, 2, 0.0, Variant::mgreedy).tree.merges[0].height, henao,
              1e-14);
  // With a leaf variance the optimum is clamped at 0 once 2 v0 exceeds the optimal s.
  EXPECT_EQ(brute_force_greedy(x, 2, 2, 5.0, Variant::minduration).tree.merges[0].height, 0.0);
}

TEST(OracleGreedy, PicksTheClosestPairFirst) {
  const std::vector<double> x = {0.0, 0.0, 2.0, 0.0, 2.1, 0.1, -3.0, 1.0};
  for (Variant v : {Variant::rate1, Variant::minduration, Variant::maxprob, Variant::mgreedy}) {
    const GreedyReference g = brute_force_greedy(x, 4, 2, 0.0, v);
    EXPECT_EQ(g.tree.merges[0].left, 1u);
    EXPECT_EQ(g.tree.merges[0].right, 2u);
  }
}

TEST(OracleGreedy, RejectsDuplicatesWithoutLeafVariance) {
  const std::vector<double> x = {0.0, 1.0, 0.0, 1.0, 2.0, 2.0};
  EXPECT_THROW(brute_force_greedy(x, 3, 2, 0.0, Variant::rate1), std::invalid_argument);
  EXPECT_NO_THROW(brute_force_greedy(x, 3, 2, 0.1, Variant::rate1));
  EXPECT_THROW(brute_force_greedy({1.0, 2.0}, 3, 1, 0.0, Variant::rate1), std::invalid_argument);
}

}  // namespace
}  // namespace kingman::oracle
