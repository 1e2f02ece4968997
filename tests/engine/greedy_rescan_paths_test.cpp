// Greedy-MinDuration and MGreedy on complete data, and binary / multinomial MinDuration with one
// mutation rate, rescore only the rows their bounds leave (engine/src/inference/
// row_duration_bounds.hpp): the tree, heights included, is the one that rescoring every pair at
// every step gives, on random data, on data full of exact ties (integer grids, duplicated rows,
// merges clamped at time 0), with and without leaf variance, with missing entries (discrete),
// and on 1, 2 and 4 threads (the pair cache's fill and the new cluster's distances split).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "../../engine/src/inference/greedy_rescan_paths.hpp"
#include "../../engine/src/scheduler/run_arena.hpp"
#include "kingman/data/table.hpp"
#include "kingman/model/discrete_data.hpp"
#include "kingman/options.hpp"

namespace kingman::detail {
namespace {

WhitenedData table(std::size_t n, std::size_t d, unsigned seed, bool grid) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> level(0, 2);
  WhitenedData data;
  data.n = n;
  data.d = d;
  data.x.resize(n * d);
  for (double& v : data.x) v = grid ? static_cast<double>(level(engine)) : normal(engine);
  data.log_lambda_diagonal.assign(d, 0.0);
  return data;
}

// The merges, heights bit for bit, or the first that differs.
void expect_same_tree(const MergeTree& expected, const MergeTree& found, const std::string& what) {
  ASSERT_EQ(found.merges.size(), expected.merges.size()) << what;
  for (std::size_t k = 0; k < expected.merges.size(); ++k) {
    ASSERT_EQ(found.merges[k].left, expected.merges[k].left) << what << ", merge " << k;
    ASSERT_EQ(found.merges[k].right, expected.merges[k].right) << what << ", merge " << k;
    ASSERT_EQ(std::bit_cast<std::uint64_t>(found.merges[k].height),
              std::bit_cast<std::uint64_t>(expected.merges[k].height))
        << what << ", merge " << k;
  }
}

TEST(GreedyRescanPaths, RowBoundsGiveTheTreeOfEveryPair) {
  for (const Algorithm algorithm : {Algorithm::greedy_minduration, Algorithm::mgreedy}) {
    for (const std::size_t d : {1u, 2u, 3u, 12u}) {
      for (unsigned seed = 1; seed <= 3; ++seed) {
        for (const bool grid : {false, true}) {
          // The grid holds many identical rows: with leaf variance 0 their merges clamp at 0.
          const WhitenedData data =
              table(90 + 40 * seed, d, seed * 7 + static_cast<unsigned>(d), grid);
          for (const double leaf_variance : {0.0, 0.05}) {
            if (grid && leaf_variance == 0.0 && algorithm == Algorithm::mgreedy) continue;
            const std::string what = to_string(algorithm) + ", d " + std::to_string(d) + ", seed " +
                                     std::to_string(seed) + (grid ? ", grid" : "") + ", v0 " +
                                     std::to_string(leaf_variance);
            const MergeTree every_pair =
                greedy_rescan(data, leaf_variance, algorithm, RescanPath::every_pair);
            const MergeTree by_bounds =
                greedy_rescan(data, leaf_variance, algorithm, RescanPath::automatic);
            expect_same_tree(every_pair, by_bounds, what);
            const MergeTree uncached =
                greedy_rescan(data, leaf_variance, algorithm, RescanPath::automatic, false);
            expect_same_tree(every_pair, uncached, what + ", no pair cache");
          }
        }
      }
    }
  }
}

TEST(GreedyRescanPaths, TheSameTreeOnOneTwoAndFourThreads) {
  // 600 points at d = 8: the pair cache's fill splits into rows on the threads.
  const WhitenedData data = table(600, 8, 5, false);
  for (const Algorithm algorithm :
       {Algorithm::greedy_minduration, Algorithm::mgreedy, Algorithm::greedy_maxprob}) {
    MergeTree one;
    RunArena(1).execute([&] { one = greedy_rescan(data, 0.0, algorithm, RescanPath::automatic); });
    for (const int threads : {2, 4}) {
      MergeTree many;
      RunArena(threads).execute(
          [&] { many = greedy_rescan(data, 0.0, algorithm, RescanPath::automatic); });
      expect_same_tree(one, many, to_string(algorithm) + ", " + std::to_string(threads));
      if (algorithm == Algorithm::greedy_maxprob) continue;
      RunArena(threads).execute(
          [&] { many = greedy_rescan(data, 0.0, algorithm, RescanPath::automatic, false); });
      expect_same_tree(one, many,
                       to_string(algorithm) + ", no pair cache, " + std::to_string(threads));
    }
    if (algorithm == Algorithm::greedy_maxprob) continue;
    MergeTree every_pair;
    RunArena(2).execute(
        [&] { every_pair = greedy_rescan(data, 0.0, algorithm, RescanPath::every_pair); });
    expect_same_tree(every_pair, one, to_string(algorithm) + ", every pair on 2 threads");
  }
}

// Binary and multinomial tables: values drawn around a few prototypes (so that clusters and
// ties form), a share of them missing.
Table discrete_table(std::size_t n, std::size_t d, int categories, unsigned seed,
                     unsigned missing_one_in) {
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<int> value(0, categories - 1), prototype(0, 3), flip(0, 9);
  std::vector<std::vector<int>> prototypes(4, std::vector<int>(d));
  for (auto& p : prototypes)
    for (int& v : p) v = value(engine);
  Table t;
  t.rows = n;
  t.cols = d;
  t.source = "discrete";
  t.values.resize(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& p = prototypes[static_cast<std::size_t>(prototype(engine))];
    for (std::size_t j = 0; j < d; ++j) {
      double v = static_cast<double>(flip(engine) < 2 ? value(engine) : p[j]);
      if (missing_one_in > 0 && engine() % missing_one_in == 0) v = std::nan("");
      t.values[i * d + j] = v;
    }
  }
  return t;
}

TEST(GreedyRescanPaths, DiscreteRowBoundsGiveTheTreeOfEveryPair) {
  for (const int categories : {2, 4}) {
    for (unsigned seed = 1; seed <= 2; ++seed) {
      for (const unsigned missing : {0u, 7u}) {
        const Table t = discrete_table(40 + 30 * seed, 5 + seed, categories, seed, missing);
        for (const double rate : {1.0, 0.3}) {
          DiscreteOptions options;
          options.mutation_rates = {rate};
          const DiscreteData data = encode_discrete(
              t, categories == 2 ? Likelihood::binary : Likelihood::multinomial, options);
          const std::string what = std::to_string(categories) + " categories, seed " +
                                   std::to_string(seed) + ", missing " + std::to_string(missing) +
                                   ", rate " + std::to_string(rate);
          MergeTree every_pair, by_bounds;
          RunArena(2).execute([&] {
            every_pair = greedy_rescan(data, Algorithm::greedy_minduration, RescanPath::every_pair);
          });
          for (const int threads : {1, 2}) {
            RunArena(threads).execute([&] {
              by_bounds = greedy_rescan(data, Algorithm::greedy_minduration, RescanPath::automatic);
            });
            expect_same_tree(every_pair, by_bounds, what + ", " + std::to_string(threads));
          }
        }
      }
    }
  }
}

// A binary table (28 x 10, mutation rate 0.3) where a new cluster's pair with an earlier row
// is the step's best while that row's bound, without the pair, is above it: the bounds must take
// in the new cluster's column. Found by a random search against a build that skipped the column
// (it merged another pair at a step here; on every table of the test above it gave the same
// trees).
TEST(GreedyRescanPaths, DiscreteBoundsTakeInTheNewClustersColumn) {
  const char* const rows[] = {"0100111000", "1111010110", "1101100000", "1001011100", "0011000011",
                              "1000110001", "1110000100", "1010011110", "0110010000", "0001001000",
                              "0100101010", "0010011111", "0101010100", "1001000000", "1011111000",
                              "0000001000", "1111111101", "0110011110", "1110111110", "1100011001",
                              "1110011010", "1111001111", "1001111111", "0011110000", "1111001110",
                              "1011110101", "1010011110", "1000001110"};
  Table t;
  t.rows = std::size(rows);
  t.cols = 10;
  t.source = "column";
  for (const char* row : rows)
    for (std::size_t j = 0; j < t.cols; ++j) t.values.push_back(row[j] == '1' ? 1.0 : 0.0);
  DiscreteOptions options;
  options.mutation_rates = {0.3};
  const DiscreteData data = encode_discrete(t, Likelihood::binary, options);
  MergeTree every_pair, by_bounds;
  RunArena(1).execute([&] {
    every_pair = greedy_rescan(data, Algorithm::greedy_minduration, RescanPath::every_pair);
    by_bounds = greedy_rescan(data, Algorithm::greedy_minduration, RescanPath::automatic);
  });
  expect_same_tree(every_pair, by_bounds, "the column table");
}

}  // namespace
}  // namespace kingman::detail
