// The greedy family against the brute-force oracle written separately in tests/support, and
// properties of the trees it returns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <random>
#include <vector>

#include "brute_force_greedy.hpp"
#include "kingman/api.hpp"
#include "kingman/error.hpp"
#include "kingman/inference/greedy.hpp"
#include "kingman/memory_budget.hpp"
#include "kingman/model/tree_likelihood.hpp"
#include "merge_differences.hpp"

namespace kingman {
namespace {

using testing_support::differing_merges;

struct Case {
  Algorithm algorithm;
  oracle::Variant variant;
};

const Case kCases[] = {
    {Algorithm::greedy_rate1, oracle::Variant::rate1},
    {Algorithm::greedy_minduration, oracle::Variant::minduration},
    {Algorithm::greedy_maxprob, oracle::Variant::maxprob},
    {Algorithm::mgreedy, oracle::Variant::mgreedy},
};

Table random_table(std::size_t n, std::size_t d, unsigned seed, double spread = 1.0) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal(0.0, spread);
  Table t;
  t.rows = n;
  t.cols = d;
  t.source = "random";
  t.values.resize(n * d);
  for (double& v : t.values) v = normal(engine);
  return t;
}

// `t` with about one entry in `one_in` missing (NaN), drawn with `seed`.
Table with_missing(Table t, unsigned one_in, unsigned seed) {
  std::mt19937_64 engine(seed);
  for (double& value : t.values)
    if (engine() % one_in == 0) value = std::nan("");
  return t;
}

WhitenedData as_whitened(const Table& t) {
  WhitenedData w;
  w.n = t.rows;
  w.d = t.cols;
  w.x = t.values;
  w.log_lambda_diagonal.assign(t.cols, 0.0);
  return w;
}

void expect_relative_near(double expected, double actual, double tolerance, const char* what) {
  EXPECT_LE(std::abs(expected - actual), tolerance * std::max(1.0, std::abs(expected)))
      << what << ": expected " << expected << " got " << actual;
}

TEST(Greedy, EveryVariantMatchesBruteForce) {
  for (const Case& c : kCases) {
    for (std::size_t d : {1u, 2u, 5u, 20u}) {
      for (double v0 : {0.0, 0.25}) {
        for (unsigned seed = 1; seed <= 3; ++seed) {
          const std::size_t n = 3 + 11 * seed;
          const Table table = random_table(n, d, seed * 100 + static_cast<unsigned>(d));
          FitOptions options;
          options.algorithm = c.algorithm;
          options.brownian.covariance = CovarianceKind::identity;
          options.brownian.leaf_variance = v0;
          const FitResult result = fit(table, options);
          const oracle::GreedyReference reference =
              oracle::brute_force_greedy(table.values, n, d, v0, c.variant);
          SCOPED_TRACE(to_string(c.algorithm) + " d=" + std::to_string(d) +
                       " v0=" + std::to_string(v0) + " seed=" + std::to_string(seed));
          const MergeTree& tree = result.best_tree();
          ASSERT_EQ(tree.merges.size(), reference.tree.merges.size());
          for (std::size_t k = 0; k < tree.merges.size(); ++k) {
            ASSERT_EQ(tree.merges[k].left, reference.tree.merges[k].left) << "merge " << k;
            ASSERT_EQ(tree.merges[k].right, reference.tree.merges[k].right) << "merge " << k;
            expect_relative_near(reference.tree.merges[k].height, tree.merges[k].height, 1e-9,
                                 "height");
          }
          expect_relative_near(reference.log_joint, result.log_joint, 1e-9, "log joint");
        }
      }
    }
  }
}

TEST(Greedy, HeightsNondecreasingAndTreeValid) {
  const Table table = random_table(60, 3, 7);
  for (const Case& c : kCases) {
    const MergeTree tree = run_greedy(as_whitened(table), 0.0, c.algorithm);
    ASSERT_TRUE(tree.complete());
    EXPECT_NO_THROW(validate(tree));
    for (std::size_t k = 1; k < tree.merges.size(); ++k)
      EXPECT_GE(tree.merges[k].height, tree.merges[k - 1].height);
  }
}

// With no missing entries, the per-dimension message path (used for missing data) must
// reproduce the scalar closed forms: same tree, same heights.
TEST(Greedy, PerDimensionPathAgreesWithScalarPath) {
  const Table table = random_table(30, 4, 11);
  WhitenedData scalar = as_whitened(table);
  WhitenedData per_dimension = scalar;
  per_dimension.has_missing = true;
  for (const Case& c : kCases) {
    SCOPED_TRACE(to_string(c.algorithm));
    const MergeTree a = run_greedy(scalar, 0.1, c.algorithm);
    const MergeTree b = run_greedy(per_dimension, 0.1, c.algorithm);
    ASSERT_EQ(a.merges.size(), b.merges.size());
    for (std::size_t k = 0; k < a.merges.size(); ++k) {
      EXPECT_EQ(a.merges[k].left, b.merges[k].left);
      EXPECT_EQ(a.merges[k].right, b.merges[k].right);
      expect_relative_near(a.merges[k].height, b.merges[k].height, 1e-9, "height");
    }
    expect_relative_near(tree_density(scalar, 0.1, a).log_joint(),
                         tree_density(per_dimension, 0.1, b).log_joint(), 1e-9, "log joint");
  }
}

// A dimension that nobody observes carries no information (MODEL.md section 3.4): adding it
// leaves the tree and its density unchanged.
TEST(Greedy, UnobservedDimensionChangesNothing) {
  const Table table = random_table(25, 3, 5);
  WhitenedData base = as_whitened(table);
  WhitenedData padded;
  padded.n = base.n;
  padded.d = base.d + 1;
  padded.has_missing = true;
  padded.log_lambda_diagonal.assign(padded.d, 0.0);
  for (std::size_t i = 0; i < base.n; ++i) {
    for (std::size_t j = 0; j < base.d; ++j) padded.x.push_back(base.x[i * base.d + j]);
    padded.x.push_back(std::numeric_limits<double>::quiet_NaN());
  }
  for (const Case& c : kCases) {
    const MergeTree a = run_greedy(base, 0.0, c.algorithm);
    const MergeTree b = run_greedy(padded, 0.0, c.algorithm);
    ASSERT_EQ(a.merges.size(), b.merges.size());
    for (std::size_t k = 0; k < a.merges.size(); ++k) {
      EXPECT_EQ(a.merges[k].left, b.merges[k].left);
      expect_relative_near(a.merges[k].height, b.merges[k].height, 1e-9, "height");
    }
  }
}

TEST(Greedy, MissingEntriesGiveAFiniteValidTree) {
  Table table = random_table(40, 6, 21);
  std::mt19937_64 engine(3);
  for (std::size_t k = 0; k < table.values.size(); ++k)
    if (engine() % 4 == 0 && k % table.cols != 0) table.values[k] = std::nan("");
  for (const Case& c : kCases) {
    FitOptions options;
    options.algorithm = c.algorithm;
    const FitResult result = fit(table, options);
    EXPECT_TRUE(std::isfinite(result.log_joint)) << to_string(c.algorithm);
    EXPECT_NO_THROW(validate(result.best_tree()));
  }
}

TEST(Greedy, DuplicateRowsRejectedWithZeroLeafVarianceAndHandledByDefault) {
  Table table = random_table(10, 3, 2);
  for (std::size_t j = 0; j < 3; ++j) table.values[7 * 3 + j] = table.values[2 * 3 + j];
  FitOptions options;
  options.brownian.leaf_variance = 0.0;
  try {
    fit(table, options);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rows 3 and 8"), std::string::npos) << e.what();
  }
  options.brownian.leaf_variance.reset();
  const FitResult result = fit(table, options);
  EXPECT_GT(result.leaf_variance, 0.0);
  EXPECT_TRUE(std::isfinite(result.log_joint));
}

// Identical rows merge at time 0 (their duration clamps to 0): every variant writes that
// height as +0, never -0 (which a linkage file showed as "-0").
TEST(Greedy, MergesAtTimeZeroHavePositiveZeroHeights) {
  Table table = random_table(8, 3, 4);
  for (std::size_t j = 0; j < 3; ++j) {
    table.values[5 * 3 + j] = table.values[1 * 3 + j];
    table.values[6 * 3 + j] = table.values[1 * 3 + j];
  }
  for (const Algorithm algorithm : {Algorithm::greedy_rate1, Algorithm::greedy_minduration,
                                    Algorithm::greedy_maxprob, Algorithm::mgreedy}) {
    FitOptions options;
    options.algorithm = algorithm;
    options.brownian.covariance = CovarianceKind::identity;
    const FitResult result = fit(table, options);
    std::size_t zero_heights = 0;
    for (const Merge& merge : result.particles[result.best].tree.merges) {
      EXPECT_FALSE(std::signbit(merge.height)) << to_string(algorithm) << ": " << merge.height;
      zero_heights += merge.height == 0.0;
    }
    EXPECT_GE(zero_heights, 2u) << to_string(algorithm);
  }
}

// Rescaling every column by the same factor rescales the learned covariance: the tree and
// its heights stay the same.
TEST(Greedy, LearnedCovarianceIsScaleInvariant) {
  const Table table = random_table(50, 4, 9);
  Table scaled = table;
  for (double& v : scaled.values) v *= 1000.0;
  for (CovarianceKind kind : {CovarianceKind::learned, CovarianceKind::isotropic,
                              CovarianceKind::diagonal, CovarianceKind::full}) {
    FitOptions options;
    options.brownian.covariance = kind;
    const FitResult a = fit(table, options);
    const FitResult b = fit(scaled, options);
    SCOPED_TRACE(to_string(kind));
    for (std::size_t k = 0; k < a.best_tree().merges.size(); ++k) {
      EXPECT_EQ(a.best_tree().merges[k].left, b.best_tree().merges[k].left);
      expect_relative_near(a.best_tree().merges[k].height, b.best_tree().merges[k].height, 1e-6,
                           "height");
    }
    // log p(x) changes by -d (n-1) log 1000 exactly: the Jacobian of the rescaling.
    expect_relative_near(a.log_joint - 4.0 * 49.0 * std::log(1000.0), b.log_joint, 1e-6,
                         "log joint");
  }
}

// The bounded-memory Rate1 path must return exactly the full-cache path's tree, whatever the
// number of candidates kept per cluster (k = 1 forces a rescan after almost every merge).
TEST(Greedy, BoundedMemoryRate1IsTheSameTree) {
  for (unsigned seed : {1u, 2u, 3u}) {
    Table table = random_table(80 * seed, 3 + seed, seed);
    if (seed == 3) {
      std::mt19937_64 engine(seed);
      for (std::size_t k = 0; k < table.values.size(); ++k)
        if (engine() % 5 == 0 && k % table.cols != 0) table.values[k] = std::nan("");
    }
    WhitenedData data = as_whitened(table);
    data.has_missing = table.has_missing();
    const MergeTree full = greedy_rate1(data, 0.05);
    for (std::size_t k : {1u, 2u, 8u, 32u}) {
      const MergeTree bounded = greedy_rate1_bounded(data, 0.05, k);
      ASSERT_EQ(bounded.merges.size(), full.merges.size());
      for (std::size_t m = 0; m < full.merges.size(); ++m) {
        ASSERT_EQ(bounded.merges[m].left, full.merges[m].left) << "k=" << k << " merge " << m;
        ASSERT_EQ(bounded.merges[m].right, full.merges[m].right) << "k=" << k << " merge " << m;
        ASSERT_EQ(bounded.merges[m].height, full.merges[m].height) << "k=" << k << " merge " << m;
      }
    }
  }
}

// The same with ties everywhere: small integers (duplicate rows, equal distances) with missing
// entries. Equal heights go to the smallest pair by (lower slot, higher slot) in both paths; the
// bounded path used to break them by partner node id, the full path by history, and the trees
// differed (found by tests/fuzz/greedy_paths_fuzz). The last seeds have 200, 390 and 520 rows:
// 4, 7 and 9 blocks of the bounded path's initial tiles, whose scores reach a row's list from
// several tiles, in an order that must not matter.
TEST(Greedy, BoundedMemoryRate1IsTheSameTreeWithTies) {
  for (unsigned seed = 1; seed <= 30; ++seed) {
    std::mt19937_64 engine(seed);
    Table table;
    constexpr std::size_t kManyBlocks[3] = {200, 390, 520};
    table.rows = seed <= 27 ? 5 + seed : kManyBlocks[seed - 28];
    table.cols = 1 + seed % 3;
    for (std::size_t i = 0; i < table.rows; ++i) {
      std::size_t observed = 0;
      for (std::size_t j = 0; j < table.cols; ++j) {
        const bool missing = engine() % 5 == 0;
        table.values.push_back(missing ? std::nan("") : static_cast<double>(engine() % 3));
        observed += missing ? 0 : 1;
      }
      if (observed == 0) table.values[i * table.cols] = 0.0;  // never a whole row missing
    }
    WhitenedData data = as_whitened(table);
    data.has_missing = table.has_missing();
    const MergeTree full = greedy_rate1(data, 1e-3);
    for (std::size_t k : {1u, 2u, 32u}) {
      const MergeTree bounded = greedy_rate1_bounded(data, 1e-3, k);
      ASSERT_EQ(bounded.merges.size(), full.merges.size());
      for (std::size_t m = 0; m < full.merges.size(); ++m) {
        ASSERT_EQ(bounded.merges[m].left, full.merges[m].left)
            << "seed " << seed << " k=" << k << " merge " << m;
        ASSERT_EQ(bounded.merges[m].right, full.merges[m].right)
            << "seed " << seed << " k=" << k << " merge " << m;
        ASSERT_EQ(bounded.merges[m].height, full.merges[m].height)
            << "seed " << seed << " k=" << k << " merge " << m;
      }
    }
  }
}

// A memory budget too small for the pair cache routes Greedy-Rate1 to the bounded path (same
// tree) and makes the O(n^3) variants refuse before allocating, saying what would fit.
TEST(Greedy, MemoryBudgetRoutesOrRefuses) {
  const Table table = random_table(2000, 3, 12);
  const WhitenedData data = as_whitened(table);
  // The pair cache needs 2000*1999/2 doubles (16 MB); the bounded path about 2 MB.
  const std::size_t small = std::size_t{4} << 20;
  ASSERT_GT(greedy_pair_cache_bytes(2000, 3), small);
  ASSERT_LT(greedy_rate1_bounded_bytes(2000, 4), small - (std::size_t{1} << 20));
  const MergeTree routed = run_greedy(data, 0.0, Algorithm::greedy_rate1, small);
  const MergeTree full = run_greedy(data, 0.0, Algorithm::greedy_rate1);
  ASSERT_EQ(routed.merges.size(), full.merges.size());
  for (std::size_t m = 0; m < full.merges.size(); ++m)
    EXPECT_EQ(routed.merges[m].height, full.merges[m].height);
  try {
    run_greedy(data, 0.0, Algorithm::greedy_maxprob, small);
    FAIL() << "expected ResourceError";
  } catch (const ResourceError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--max-memory"), std::string::npos) << message;
    EXPECT_NE(message.find("would fit"), std::string::npos) << message;
  }
  // Below what even the bounded path needs, Greedy-Rate1 refuses too, before allocating.
  try {
    run_greedy(data, 0.0, Algorithm::greedy_rate1, 100 * 1024);
    FAIL() << "expected ResourceError";
  } catch (const ResourceError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--max-memory"), std::string::npos) << message;
    EXPECT_NE(message.find("without its pair cache"), std::string::npos) << message;
  }
}

TEST(Greedy, PairStorageIsChosenByTheRuleAndTheBudgetOrAsAsked) {
  const std::size_t d = 20, ample = std::size_t{1} << 40;
  // Automatic: the full cache below each tier's points, the bounded path from them on, for
  // the first and the last thread count of the tier; more threads never raise the threshold.
  const std::size_t tiers = std::size(kBoundedPathTiers);
  for (std::size_t t = 0; t < tiers; ++t) {
    const BoundedPathTier tier = kBoundedPathTiers[t];
    const std::size_t last_threads =
        t + 1 < tiers ? kBoundedPathTiers[t + 1].from_threads - 1 : 4 * tier.from_threads;
    if (t > 0) {
      EXPECT_GT(tier.from_threads, kBoundedPathTiers[t - 1].from_threads);
      EXPECT_LE(tier.from_points, kBoundedPathTiers[t - 1].from_points);
    }
    for (const std::size_t threads : {tier.from_threads, last_threads}) {
      EXPECT_EQ(
          greedy_rate1_storage(tier.from_points - 1, d, threads, ample, PairStorage::automatic),
          PairStorage::full)
          << threads << " threads";
      EXPECT_EQ(greedy_rate1_storage(tier.from_points, d, threads, ample, PairStorage::automatic),
                PairStorage::bounded)
          << threads << " threads";
    }
  }
  EXPECT_EQ(kBoundedPathTiers[0].from_threads, 1u);
  // Threads beyond the cores take turns: the rule counts the cores.
  const BoundedPathTier last = kBoundedPathTiers[tiers - 1];
  EXPECT_EQ(greedy_rate1_storage(last.from_points, d, last.from_threads, ample,
                                 PairStorage::automatic, last.from_threads),
            PairStorage::bounded);
  EXPECT_EQ(greedy_rate1_storage(last.from_points, d, last.from_threads, ample,
                                 PairStorage::automatic, 1),
            PairStorage::full);
  const std::size_t two_thread_points = kBoundedPathTiers[1].from_points;
  ASSERT_EQ(kBoundedPathTiers[1].from_threads, 2u);
  // More dimensions: the thresholds grow with d beyond the reference (the bounded path's
  // recomputation grows with d, the full cache's memory traffic does not).
  const std::size_t d5 = 5 * kBoundedReferenceDims;
  EXPECT_EQ(greedy_rate1_storage(two_thread_points, d5, 2, ample, PairStorage::automatic),
            PairStorage::full);
  EXPECT_EQ(greedy_rate1_storage(5 * two_thread_points - 1, d5, 2, ample, PairStorage::automatic),
            PairStorage::full);
  EXPECT_EQ(greedy_rate1_storage(5 * two_thread_points, d5, 2, ample, PairStorage::automatic),
            PairStorage::bounded);
  EXPECT_EQ(greedy_rate1_storage(two_thread_points, 3, 2, ample, PairStorage::automatic),
            PairStorage::bounded);
  // A budget the full cache does not fit routes to the bounded path at any size.
  const std::size_t n = 2000;
  EXPECT_EQ(
      greedy_rate1_storage(n, d, 2, greedy_pair_cache_bytes(n, d) - 1, PairStorage::automatic),
      PairStorage::bounded);
  EXPECT_EQ(greedy_rate1_storage(n, d, 2, greedy_pair_cache_bytes(n, d), PairStorage::automatic),
            PairStorage::full);
  // Where the bounded path is preferred but only the full cache fits (a row per thread on that
  // many threads outweighs the n^2/2 scores): the full cache.
  const std::size_t many = 100000, at = kBoundedPathTiers[tiers - 1].from_points;
  ASSERT_GT(greedy_rate1_bounded_bytes(at, many), greedy_pair_cache_bytes(at, d));
  EXPECT_EQ(
      greedy_rate1_storage(at, d, many, greedy_pair_cache_bytes(at, d), PairStorage::automatic),
      PairStorage::full);
  // Asked for: given wherever it fits, refused with both needs named where it does not.
  EXPECT_EQ(greedy_rate1_storage(n, d, 2, ample, PairStorage::bounded), PairStorage::bounded);
  EXPECT_EQ(greedy_rate1_storage(two_thread_points, d, 16, ample, PairStorage::full),
            PairStorage::full);
  try {
    greedy_rate1_storage(n, d, 2, greedy_pair_cache_bytes(n, d) - 1, PairStorage::full);
    FAIL() << "expected ResourceError";
  } catch (const ResourceError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--pair-storage full"), std::string::npos) << message;
    EXPECT_NE(message.find("--pair-storage bounded it needs"), std::string::npos) << message;
  }
  EXPECT_THROW(greedy_rate1_storage(n, d, 2, 100 * 1024, PairStorage::bounded), ResourceError);
}

TEST(Greedy, BothPairStoragesGiveTheSameTreeAndSayWhichRan) {
  const WhitenedData data = as_whitened(random_table(700, 4, 21));
  PairStorage used = PairStorage::automatic;
  const MergeTree full = run_greedy(data, 0.0, Algorithm::greedy_rate1, default_memory_budget(),
                                    PairStorage::full, &used);
  EXPECT_EQ(used, PairStorage::full);
  const MergeTree bounded = run_greedy(data, 0.0, Algorithm::greedy_rate1, default_memory_budget(),
                                       PairStorage::bounded, &used);
  EXPECT_EQ(used, PairStorage::bounded);
  ASSERT_EQ(bounded.merges.size(), full.merges.size());
  for (std::size_t m = 0; m < full.merges.size(); ++m) {
    EXPECT_EQ(bounded.merges[m].left, full.merges[m].left) << m;
    EXPECT_EQ(bounded.merges[m].right, full.merges[m].right) << m;
    EXPECT_EQ(bounded.merges[m].height, full.merges[m].height) << m;
  }
  // MinDuration and MGreedy on complete data rescore rows by bounds, with the pair cache where
  // it fits (auto, full) or without it (bounded, and auto where the cache would not fit): the
  // same tree. A budget below the cache's need refuses full. MaxProb keeps every pair: no
  // bounded path to ask for; nor on data with missing entries.
  for (const Algorithm algorithm : {Algorithm::greedy_minduration, Algorithm::mgreedy}) {
    const MergeTree cached =
        run_greedy(data, 0.0, algorithm, default_memory_budget(), PairStorage::automatic, &used);
    EXPECT_EQ(used, PairStorage::full);
    const MergeTree uncached =
        run_greedy(data, 0.0, algorithm, default_memory_budget(), PairStorage::bounded, &used);
    EXPECT_EQ(used, PairStorage::bounded);
    EXPECT_EQ(differing_merges(cached, uncached), 0u) << to_string(algorithm);
    const std::size_t below_cache = greedy_pair_cache_bytes(700, 4) / 2;
    EXPECT_EQ(differing_merges(cached, run_greedy(data, 0.0, algorithm, below_cache,
                                                  PairStorage::automatic, &used)),
              0u);
    EXPECT_EQ(used, PairStorage::bounded);
    EXPECT_THROW(run_greedy(data, 0.0, algorithm, below_cache, PairStorage::full), ResourceError);
  }
  EXPECT_THROW(run_greedy(data, 0.0, Algorithm::greedy_maxprob, default_memory_budget(),
                          PairStorage::bounded),
               OptionError);
  const WhitenedData missing = as_whitened(with_missing(random_table(60, 4, 22), 6, 3));
  ASSERT_TRUE(
      std::any_of(missing.x.begin(), missing.x.end(), [](double v) { return std::isnan(v); }));
  WhitenedData flagged = missing;
  flagged.has_missing = true;
  EXPECT_THROW(run_greedy(flagged, 0.25, Algorithm::greedy_minduration, default_memory_budget(),
                          PairStorage::bounded),
               OptionError);
  run_greedy(flagged, 0.25, Algorithm::greedy_minduration, default_memory_budget(),
             PairStorage::automatic, &used);
  EXPECT_EQ(used, PairStorage::full);
}

TEST(MemoryBudget, ParsesSizesAndRejectsNonsense) {
  EXPECT_EQ(parse_memory_size("1000", "--max-memory"), 1000u);
  EXPECT_EQ(parse_memory_size("64k", "--max-memory"), 64u * 1024);
  EXPECT_EQ(parse_memory_size("512M", "--max-memory"), 512u * 1024 * 1024);
  EXPECT_EQ(parse_memory_size("2GiB", "--max-memory"), 2ull * 1024 * 1024 * 1024);
  EXPECT_EQ(parse_memory_size("1.5G", "--max-memory"), 3ull * 512 * 1024 * 1024);
  for (const char* bad : {"", "G", "-1G", "12Q", "nan", "0"})
    EXPECT_THROW(parse_memory_size(bad, "--max-memory"), OptionError) << bad;
  EXPECT_GT(default_memory_budget(), 0u);
}

TEST(Greedy, SameInputSameOutput) {
  const Table table = random_table(80, 5, 4);
  FitOptions options;
  const FitResult a = fit(table, options);
  const FitResult b = fit(table, options);
  ASSERT_EQ(a.best_tree().merges.size(), b.best_tree().merges.size());
  for (std::size_t k = 0; k < a.best_tree().merges.size(); ++k) {
    EXPECT_EQ(a.best_tree().merges[k].left, b.best_tree().merges[k].left);
    EXPECT_EQ(a.best_tree().merges[k].height, b.best_tree().merges[k].height);
  }
  EXPECT_EQ(a.log_joint, b.log_joint);
}

// Fits `table` with `algorithm` (identity covariance) on 1, 2 and 4 threads and expects the
// same tree, bit for bit; with `bounded`, also under a budget below the pair matrix (the
// bounded-memory Greedy-Rate1).
void expect_same_tree_for_thread_counts(const Table& table, Algorithm algorithm, bool bounded) {
  FitOptions options;
  options.algorithm = algorithm;
  options.brownian.covariance = CovarianceKind::identity;
  options.threads = 1;
  const FitResult one = fit(table, options);
  for (int threads : {2, 4}) {
    options.threads = threads;
    const FitResult many = fit(table, options);
    EXPECT_EQ(many.threads, threads);
    EXPECT_EQ(differing_merges(one.best_tree(), many.best_tree()), 0u)
        << to_string(algorithm) << ", " << table.rows << " rows, " << threads << " threads";
    EXPECT_EQ(one.log_joint, many.log_joint);
    if (!bounded) continue;
    // One byte short of the pair cache's need: the bounded path, which needs far less.
    FitOptions small_budget = options;
    small_budget.max_memory = greedy_pair_cache_bytes(table.rows, table.cols) - 1;
    EXPECT_EQ(differing_merges(one.best_tree(), fit(table, small_budget).best_tree()), 0u)
        << table.rows << " rows, bounded, " << threads << " threads";
  }
}

// Greedy-Rate1 scores its pairs on the requested threads (generic_linkage.hpp: the initial fill
// by rows, long new rows in pieces that also write the pair matrix and mark heap updates; the
// bounded path's initial lists by slots, and its long merge and rebuild rows in pieces that
// make the offers and keep their best): the tree and its heights do not depend on how many.
// Sizes where the pieces do split: complete data at d = 20 (the fill), complete data at d = 200,
// whose new rows split from about 1 170 partners on (the complete rows' batched distances, a
// piece often holding partners on both sides of the new slot), and data with missing entries
// at d = 40, whose rows split from about 900 partners on. The bounded path's rows split from
// about 1 170 and 860 partners on there (greedy_rate1_bounded.cpp); its lists are redundant (a
// pair is found from either side), so a piece that lost its offers alone, or its best alone,
// still gave the right tree, but one that lost both did not.
TEST(Greedy, SameTreeForOneTwoAndFourThreads) {
  expect_same_tree_for_thread_counts(random_table(1200, 20, 31), Algorithm::greedy_rate1, true);
  expect_same_tree_for_thread_counts(random_table(1300, 200, 33), Algorithm::greedy_rate1, true);
  expect_same_tree_for_thread_counts(with_missing(random_table(1000, 40, 32), 10, 5),
                                     Algorithm::greedy_rate1, true);
}

// The rescanning greedy algorithms score each step's rows on the requested threads
// (best_live_pair.hpp), joining the rows' minima in row order: the same tree for 1, 2 and 4.
TEST(Greedy, RescanningVariantsSameTreeForOneTwoAndFourThreads) {
  const Table complete = random_table(160, 8, 41);
  const Table missing = with_missing(random_table(140, 8, 42), 8, 6);
  for (Algorithm algorithm :
       {Algorithm::greedy_minduration, Algorithm::greedy_maxprob, Algorithm::mgreedy}) {
    expect_same_tree_for_thread_counts(complete, algorithm, false);
    expect_same_tree_for_thread_counts(missing, algorithm, false);
  }
}

TEST(Greedy, RejectsBadOptions) {
  const Table table = random_table(5, 2, 1);
  FitOptions options;
  options.brownian.leaf_variance = -1.0;
  EXPECT_THROW(fit(table, options), OptionError);
  options.brownian.leaf_variance = std::nan("");
  EXPECT_THROW(fit(table, options), OptionError);
  Table one_row = random_table(1, 2, 1);
  EXPECT_THROW(fit(one_row, FitOptions{}), InputError);
}

}  // namespace
}  // namespace kingman
