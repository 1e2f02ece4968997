// The particle systems' merge-history owner (history_pool.hpp): under resampling that pools
// and splits lineages, every particle's history stays exactly the merges it recorded (a sweep
// that freed a node some history reaches would let a later step overwrite it), and the pool
// holds about what the histories reach, not every node it ever handed out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include "../../engine/src/inference/smc/history_pool.hpp"
#include "kingman/kernels/rng.hpp"

namespace kingman::detail {
namespace {

constexpr double kSmallestBlock = 256;  // history_pool.hpp's

// The merges of `history`, the latest last; at most `most` + 1 of them (an overwritten node may
// close a cycle).
std::vector<Merge> merges_of(const HistoryNode* history, std::size_t most) {
  std::vector<Merge> merges;
  for (const HistoryNode* h = history; h && merges.size() <= most; h = h->previous)
    merges.push_back(h->merge);
  std::reverse(merges.begin(), merges.end());
  return merges;
}

// Nodes that the histories reach (call it once they are checked: no cycles).
std::size_t reached(const std::vector<const HistoryNode*>& histories) {
  std::set<const HistoryNode*> nodes;
  for (const HistoryNode* history : histories)
    for (const HistoryNode* h = history; h && nodes.insert(h).second; h = h->previous) {
    }
  return nodes.size();
}

// `particles` histories stepped `steps` times, each step resampled by `ancestor_of(step, s)`
// (applied to the histories and to a reference copy of every particle's merge list). Checks
// every history against its reference after each step, and returns the most nodes the pool
// held (less one smallest block) relative to the most the histories reached so far plus a
// step's worth. By design that is below 3: a sweep is due once what is in use reaches twice
// what the last sweep kept plus a step's, and a new block holds at most half the pool.
template <typename AncestorOf>
double run_and_check(std::size_t particles, std::size_t steps, const AncestorOf& ancestor_of) {
  HistoryPool pool;
  std::vector<const HistoryNode*> histories(particles, nullptr), resampled(particles);
  std::vector<std::vector<Merge>> reference(particles), next_reference(particles);
  double worst_ratio = 0.0;
  std::size_t most_reached = 0;
  for (std::size_t step = 0; step < steps; ++step) {
    pool.start_step(particles, [&](std::size_t s) { return histories[s]; });
    for (std::size_t s = 0; s < particles; ++s) {
      // A merge unique to (step, particle): an overwritten node shows.
      const Merge merge{s, step, static_cast<double>(step * particles + s)};
      append_merge(histories[s], pool.node(s), merge);
      reference[s].push_back(merge);
    }
    for (std::size_t s = 0; s < particles; ++s) {
      const std::size_t a = ancestor_of(step, s);
      resampled[s] = histories[a];
      next_reference[s] = reference[a];
    }
    histories.swap(resampled);
    reference.swap(next_reference);
    for (std::size_t s = 0; s < particles; ++s) {
      const std::vector<Merge> merges = merges_of(histories[s], reference[s].size());
      EXPECT_EQ(merges.size(), reference[s].size()) << "step " << step << ", particle " << s;
      if (merges.size() != reference[s].size()) return worst_ratio;
      for (std::size_t k = 0; k < merges.size(); ++k) {
        if (merges[k].left != reference[s][k].left || merges[k].right != reference[s][k].right ||
            merges[k].height != reference[s][k].height) {
          ADD_FAILURE() << "step " << step << ", particle " << s << ": merge " << k
                        << " was overwritten";
          return worst_ratio;
        }
      }
    }
    most_reached = std::max(most_reached, reached(histories));
    const double ratio = (static_cast<double>(pool.held()) - kSmallestBlock) /
                         static_cast<double>(most_reached + particles);
    worst_ratio = std::max(worst_ratio, ratio);
  }
  return worst_ratio;
}

TEST(HistoryPool, RandomResamplingKeepsEveryHistoryIntact) {
  // Ancestors drawn at random: lineages die out, split and pool.
  const std::size_t particles = 40;
  const double worst = run_and_check(particles, 600, [](std::size_t step, std::size_t s) {
    kernels::RandomStream stream(5, s, step + 1);
    return static_cast<std::size_t>(stream.below(particles));
  });
  EXPECT_LT(worst, 3.0);
}

TEST(HistoryPool, OneSurvivingLineageKeepsThePoolSmall) {
  // Every step all particles continue from particle 0: what is reached is one chain plus the
  // last step's nodes, so the pool must not hold a node per particle and step (96 000 here).
  const std::size_t particles = 64, steps = 1500;
  HistoryPool pool;
  std::vector<const HistoryNode*> histories(particles, nullptr);
  for (std::size_t step = 0; step < steps; ++step) {
    pool.start_step(particles, [&](std::size_t s) { return histories[s]; });
    for (std::size_t s = 0; s < particles; ++s)
      append_merge(histories[s], pool.node(s), Merge{s, step, 0.0});
    for (std::size_t s = 1; s < particles; ++s) histories[s] = histories[0];
  }
  EXPECT_EQ(merges_of(histories[0], steps).size(), steps);
  EXPECT_LT(pool.held(), 4 * (steps + particles));
  EXPECT_GE(pool.kept(), steps / 2);  // a late sweep kept the chain
}

TEST(HistoryPool, WithoutResamplingEveryNodeIsKept) {
  // Independent lineages: every node stays reached, and none is handed out twice.
  const double worst = run_and_check(8, 300, [](std::size_t, std::size_t s) { return s; });
  EXPECT_LT(worst, 3.0);
}

}  // namespace
}  // namespace kingman::detail
