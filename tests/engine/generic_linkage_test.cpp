// generic_linkage.hpp: with a pair score that is NaN it stops with a NumericalError naming the
// pair (it used to rescan that pair's row forever: a NaN height never equals its heap key); with
// many equal scores it merges the pair that is smallest by (height, lower slot, higher slot), as
// a brute-force search does.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "../../engine/src/inference/generic_linkage.hpp"
#include "kingman/error.hpp"

namespace kingman {
namespace {

TEST(GenericLinkage, ANaNMergeHeightStopsWithTheNodesNamed) {
  for (const auto& [first, second] : {std::pair<std::size_t, std::size_t>{0, 1}, {2, 3}}) {
    auto score = [&](std::size_t i, std::size_t j) {
      return i == first && j == second ? std::numeric_limits<double>::quiet_NaN()
                                       : 1.0 + static_cast<double>(i + j);
    };
    std::size_t merges = 0;
    try {
      detail::generic_linkage(5, score, [&](std::size_t, std::size_t, double) { ++merges; });
      ADD_FAILURE() << "no error for the NaN height of " << first << " and " << second;
    } catch (const NumericalError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("is not a number"), std::string::npos) << message;
    }
    EXPECT_LT(merges, 4u);
  }
  // A NaN height of a merged cluster's pair stops the run at that merge, whichever pair it is,
  // and whether or not the pair would ever be the best.
  for (const std::size_t other : {0u, 3u, 5u}) {
    std::vector<std::size_t> node = {0, 1, 2, 3, 4, 5};
    std::size_t next = 6, merges = 0;
    auto score = [&](std::size_t i, std::size_t j) {
      const std::size_t low = std::min(node[i], node[j]), high = std::max(node[i], node[j]);
      return low == other && high == 6 ? std::numeric_limits<double>::quiet_NaN()
                                       : 1.0 + static_cast<double>(low + high);
    };
    try {
      detail::generic_linkage(6, score, [&](std::size_t a, std::size_t, double) {
        node[a] = next++;
        ++merges;
      });
      if (other > 1) ADD_FAILURE() << "no error for the NaN height of " << other << " and 6";
    } catch (const NumericalError& error) {
      EXPECT_GT(other, 1u) << "node " << other << " merged first: no pair with 6 to fail";
      const std::string message = error.what();
      EXPECT_NE(message.find("nodes " + std::to_string(other) + " and 6 is not a number"),
                std::string::npos)
          << message;
      EXPECT_EQ(merges, 1u);
    }
  }
  // Without a NaN the same scores give a complete tree.
  const MergeTree tree = detail::generic_linkage(
      5, [](std::size_t i, std::size_t j) { return 1.0 + static_cast<double>(i + j); },
      [](std::size_t, std::size_t, double) {});
  EXPECT_EQ(tree.merges.size(), 4u);
}

// A pair score fixed when the pair exists, from its two node ids, taking three values only: most
// pairs tie with many others.
double tied_score(std::size_t a, std::size_t b, std::uint64_t seed) {
  std::uint64_t h = seed ^ (std::min(a, b) * 0x9E3779B97F4A7C15ULL) ^ (std::max(a, b) << 32);
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 32;
  return static_cast<double>(h % 3);
}

// The rule by brute force: every live pair of slots (i < j) scored, the smallest by (score, i, j)
// merged at its score clamped to the previous height, the merged cluster taking slot i.
MergeTree brute_force_linkage(std::size_t n, std::uint64_t seed) {
  MergeTree tree;
  tree.leaf_count = n;
  std::vector<std::size_t> node(n);
  std::vector<char> live(n, 1);
  for (std::size_t i = 0; i < n; ++i) node[i] = i;
  double current = 0.0;
  for (std::size_t step = 0; step + 1 < n; ++step) {
    std::tuple<double, std::size_t, std::size_t> best{std::numeric_limits<double>::infinity(), n,
                                                      n};
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j)
        if (live[i] && live[j]) best = std::min(best, {tied_score(node[i], node[j], seed), i, j});
    const auto [score, i, j] = best;
    current = std::max(current, score);
    tree.merges.push_back({std::min(node[i], node[j]), std::max(node[i], node[j]), current});
    live[j] = 0;
    node[i] = n + step;
  }
  return tree;
}

TEST(GenericLinkage, EqualHeightsGoToTheSmallestSlotPair) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const std::size_t n = 3 + seed % 29;
    std::vector<std::size_t> node(n);
    for (std::size_t i = 0; i < n; ++i) node[i] = i;
    std::size_t next = n;
    const MergeTree tree = detail::generic_linkage(
        n, [&](std::size_t i, std::size_t j) { return tied_score(node[i], node[j], seed); },
        [&](std::size_t a, std::size_t, double) { node[a] = next++; });
    const MergeTree expected = brute_force_linkage(n, seed);
    ASSERT_EQ(tree.merges.size(), expected.merges.size());
    for (std::size_t m = 0; m < expected.merges.size(); ++m) {
      EXPECT_EQ(tree.merges[m].left, expected.merges[m].left) << "seed " << seed << " merge " << m;
      EXPECT_EQ(tree.merges[m].right, expected.merges[m].right)
          << "seed " << seed << " merge " << m;
      EXPECT_EQ(tree.merges[m].height, expected.merges[m].height) << "seed " << seed;
    }
  }
}

// The same scores, with some heights +inf, where every row runs in pieces on 2 threads: a score
// that states a large cost per pair makes rows of more than 4 partners split (parallel_for.hpp),
// so the new clusters' rows take their minima from the pieces (RowMinimumOffers) and the
// initial rows theirs from the fill's tasks. The tree is still the brute force's.
struct CostlyTiedScore {
  const std::vector<std::size_t>* node;
  std::uint64_t seed;
  double operator()(std::size_t i, std::size_t j) const {
    const double score = tied_score((*node)[i], (*node)[j], seed ^ 0x5bd1e995ULL);
    return score == 0.0 && ((*node)[i] + (*node)[j]) % 4 == 0
               ? std::numeric_limits<double>::infinity()
               : score;
  }
  std::size_t pair_work() const { return std::size_t{1} << 16; }
};

TEST(GenericLinkage, RowsInPiecesOnThreadsGiveTheBruteForceTree) {
  tbb::task_arena arena(2);
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const std::size_t n = 3 + (seed * 7) % 58;
    std::vector<std::size_t> node(n);
    for (std::size_t i = 0; i < n; ++i) node[i] = i;
    std::size_t next = n;
    const CostlyTiedScore score{&node, seed};
    MergeTree tree;
    arena.execute([&] {
      tree = detail::generic_linkage(n, score,
                                     [&](std::size_t a, std::size_t, double) { node[a] = next++; });
    });
    // The brute force over the same scores, the merged cluster in the lower slot.
    std::vector<std::size_t> brute_node(n);
    std::vector<char> live(n, 1);
    for (std::size_t i = 0; i < n; ++i) brute_node[i] = i;
    const CostlyTiedScore brute_score{&brute_node, seed};
    double current = 0.0;
    ASSERT_EQ(tree.merges.size(), n - 1);
    for (std::size_t step = 0; step + 1 < n; ++step) {
      std::tuple<double, std::size_t, std::size_t> best{std::numeric_limits<double>::infinity(), n,
                                                        n};
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j)
          if (live[i] && live[j]) {
            const std::tuple<double, std::size_t, std::size_t> pair{brute_score(i, j), i, j};
            if (std::get<1>(best) == n || pair < best) best = pair;
          }
      const auto [height, i, j] = best;
      current = std::max(current, height);
      EXPECT_EQ(tree.merges[step].left, std::min(brute_node[i], brute_node[j]))
          << "seed " << seed << " merge " << step;
      EXPECT_EQ(tree.merges[step].right, std::max(brute_node[i], brute_node[j]))
          << "seed " << seed << " merge " << step;
      EXPECT_EQ(tree.merges[step].height, current) << "seed " << seed << " merge " << step;
      live[j] = 0;
      brute_node[i] = n + step;
    }
  }
}

}  // namespace
}  // namespace kingman
