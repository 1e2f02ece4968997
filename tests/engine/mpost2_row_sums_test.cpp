// MPost2's two ways of summing pair weights to choose a pair (Mpost2RowSums): the leaf row sums
// carried from state to state must give the proposal of the dense sums up to their ~2^-30
// error, so with one seed both runs draw the same pairs and durations and their weights agree
// to that error; and leaf sums, like everything else, must not depend on the thread count.
// d = 64 makes the pair weights so peaked that a merged leaf often carries most of a row's sum
// away, which exercises the full recomputation as well as the subtraction. With leaf sums the
// merged partners' part may be shared by a step's states (SharedRowSums): it must equal each
// state's own sums up to rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "../../engine/src/inference/smc/pair_cache.hpp"
#include "../../engine/src/inference/smc/proposals.hpp"
#include "../../engine/src/inference/smc/shared_row_sums.hpp"
#include "kingman/inference/smc.hpp"
#include "kingman/kernels/rng.hpp"
#include "kingman/model/coalescent_prior.hpp"
#include "pooled_lineages.hpp"
#include "random_whitened.hpp"
#include "same_draws.hpp"

namespace kingman {
namespace {

WhitenedData random_data(std::size_t n, std::size_t d, unsigned seed) {
  return testing_support::random_whitened(n, d, seed);
}

SmcResult run(const WhitenedData& data, double leaf_variance, Mpost2RowSums row_sums, int threads,
              bool share_row_sums = true) {
  SmcOptions options;
  options.proposal = Algorithm::mpost2;
  options.particles = 48;
  options.seed = 7;
  options.threads = threads;
  options.mpost2_row_sums = row_sums;
  options.mpost2_share_row_sums = share_row_sums;
  return run_smc(data, leaf_variance, options);
}

void expect_same_draws(const SmcResult& a, const SmcResult& b, double evidence_tolerance) {
  testing_support::expect_same_draws(a, b, evidence_tolerance, 1e-9);
}

TEST(Mpost2RowSums, LeafSumsDrawWhatDenseSumsDraw) {
  for (const auto& [n, d, leaf_variance] :
       {std::tuple{40u, 64u, 0.0}, std::tuple{60u, 8u, 0.2}, std::tuple{33u, 200u, 0.0}}) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", d = " + std::to_string(d));
    const WhitenedData data = random_data(n, d, 11 + n);
    const SmcResult dense = run(data, leaf_variance, Mpost2RowSums::dense, 1);
    const SmcResult sums = run(data, leaf_variance, Mpost2RowSums::leaf_sums, 1);
    // Each step's weights differ by the sums' relative error (~2^-30) at most.
    expect_same_draws(dense, sums, 1e-7 * static_cast<double>(n));
    // The automatic choice at these sizes is the dense sums, bit for bit.
    EXPECT_EQ(run(data, leaf_variance, Mpost2RowSums::automatic, 1).log_evidence,
              dense.log_evidence);
  }
}

TEST(Mpost2RowSums, LeafSumsIgnoreTheThreadCount) {
  const WhitenedData data = random_data(40, 64, 5);
  const SmcResult one = run(data, 0.0, Mpost2RowSums::leaf_sums, 1);
  for (int threads : {2, 4}) {
    const SmcResult many = run(data, 0.0, Mpost2RowSums::leaf_sums, threads);
    EXPECT_EQ(many.log_evidence, one.log_evidence) << threads << " threads";
    EXPECT_EQ(many.ess, one.ess) << threads << " threads";
    ASSERT_EQ(many.particles.size(), one.particles.size());
    for (std::size_t s = 0; s < one.particles.size(); ++s)
      EXPECT_EQ(many.particles[s].log_weight, one.particles[s].log_weight);
  }
}

// Step by step, one particle: every live cluster's row sum from the leaf sums against the
// dense (exact) one, at 1e-8 relative. The subtraction alone would leave rounding noise where
// a merged leaf carried nearly all of a row's sum; the full recomputation must catch those.
TEST(Mpost2RowSums, EveryRowSumMatchesTheDenseSumAtEveryStep) {
  const std::size_t n = 40, d = 64;
  const WhitenedData data = random_data(n, d, 23);
  const detail::LeafPairCache dense_cache(data, detail::LeafPairs::mpost2_weights,
                                          Mpost2RowSums::dense);
  const detail::LeafPairCache sums_cache(data, detail::LeafPairs::mpost2_weights,
                                         Mpost2RowSums::leaf_sums);
  ASSERT_FALSE(dense_cache.uses_leaf_sums());
  ASSERT_TRUE(sums_cache.uses_leaf_sums());
  testing_support::ClusterNodes nodes;
  const auto leaves = testing_support::make_leaves(data, 0.0, nodes);
  detail::ParticleState dense_state, sums_state;
  dense_state.live = sums_state.live = leaves;
  const detail::StepContext dense_context{Algorithm::mpost2, n, d, 0.0, &dense_cache};
  const detail::StepContext sums_context{Algorithm::mpost2, n, d, 0.0, &sums_cache};
  testing_support::StepRecords records;
  std::size_t compared = 0;
  for (std::size_t step = 0; step + 1 < n; ++step) {
    detail::PairCandidates dense_pairs, sums_pairs;
    sums_pairs.leaf_sums = records.leaf_sums();
    detail::build_candidates(dense_state, dense_context, dense_pairs);
    detail::build_candidates(sums_state, sums_context, sums_pairs);
    ASSERT_EQ(dense_pairs.is_factored, sums_pairs.is_factored) << "step " << step;
    if (dense_pairs.is_factored) {
      const auto& exact = dense_pairs.factored.row_sum;
      const auto& carried = sums_pairs.factored.row_sum;
      ASSERT_EQ(exact.size(), carried.size());
      for (std::size_t z = 0; z < exact.size(); ++z, ++compared)
        EXPECT_NEAR(carried[z], exact[z], 1e-8 * exact[z] + 1e-290)
            << "step " << step << ", live position " << z;
    }
    detail::ChosenPairCache dense_chosen, sums_chosen;
    std::unique_ptr<detail::ClusterNode> dense_created, sums_created;
    kernels::RandomStream dense_stream(3, 0, step + 1), sums_stream(3, 0, step + 1);
    const double dense_alpha =
        detail::draw_and_merge(dense_state, dense_pairs, step, dense_context, dense_stream,
                               dense_chosen, dense_created, records.merge());
    const double sums_alpha =
        detail::draw_and_merge(sums_state, sums_pairs, step, sums_context, sums_stream, sums_chosen,
                               sums_created, records.merge());
    EXPECT_NEAR(sums_alpha, dense_alpha, 1e-8 * std::max(1.0, std::abs(dense_alpha)));
    ASSERT_EQ(sums_state.history->merge.left, dense_state.history->merge.left);
    ASSERT_EQ(sums_state.history->merge.right, dense_state.history->merge.right);
    nodes.push_back(std::move(dense_created));
    nodes.push_back(std::move(sums_created));
  }
  EXPECT_GT(compared, n * (n - 1) / 4);
}

// Whole runs where resampling leaves a few recent ancestors, so that the step's states share
// the merged partners' sums: the same draws as each state summing its own rows (the proposal
// differs by rounding only), and the same bits on any thread count.
TEST(Mpost2RowSums, SharedRowSumsDrawWhatOwnSumsDraw) {
  const WhitenedData data = random_data(400, 12, 17);
  const SmcResult own = run(data, 0.0, Mpost2RowSums::leaf_sums, 1, /*share_row_sums=*/false);
  const SmcResult shared = run(data, 0.0, Mpost2RowSums::leaf_sums, 1, /*share_row_sums=*/true);
  expect_same_draws(own, shared, 1e-9);
  const SmcResult shared_two = run(data, 0.0, Mpost2RowSums::leaf_sums, 2, true);
  EXPECT_EQ(shared_two.log_evidence, shared.log_evidence);
  ASSERT_EQ(shared_two.particles.size(), shared.particles.size());
  for (std::size_t s = 0; s < shared.particles.size(); ++s)
    EXPECT_EQ(shared_two.particles[s].log_weight, shared.particles[s].log_weight);
}

// Several particles whose lineages are pooled every few steps (as resampling does), so that a
// step's states share a recent ancestor: at every step where SharedRowSums takes part, every
// live cluster's row sum of every state must match the state's own sum at 1e-12 relative.
TEST(Mpost2RowSums, SharedRowSumsMatchEachStatesOwnSums) {
  const std::size_t n = 100, d = 10, particles = 6;
  const WhitenedData data = random_data(n, d, 31);
  const detail::LeafPairCache cache(data, detail::LeafPairs::mpost2_weights,
                                    Mpost2RowSums::leaf_sums);
  ASSERT_TRUE(cache.uses_leaf_sums());
  testing_support::ClusterNodes nodes;
  const auto leaves = testing_support::make_leaves(data, 0.0, nodes);
  std::vector<detail::ParticleState> states(particles);
  for (auto& state : states) state.live = leaves;
  const detail::StepContext own{Algorithm::mpost2, n, d, 0.0, &cache};
  testing_support::StepRecords records;
  detail::SharedRowSums shared;
  detail::StepContext with_shared = own;
  with_shared.shared_row_sums = &shared;
  std::size_t shared_steps = 0, compared = 0;
  for (std::size_t step = 0; step + 1 < n; ++step) {
    testing_support::pool_lineages(states, step, 5);
    const auto distinct = testing_support::distinct_states(states);
    // A lenient rule, so that n = 100 shares at most steps.
    const bool sharing = shared.prepare(distinct, cache, n, coalescent_rate(n - step), step + 1,
                                        {.prefix_share = 4, .row_cost = 0});
    shared_steps += sharing;
    std::vector<detail::PairCandidates> candidates(distinct.size());
    for (std::size_t g = 0; g < distinct.size(); ++g) {
      candidates[g].leaf_sums = records.leaf_sums();
      detail::build_candidates(*distinct[g], own, candidates[g]);
      if (!sharing || !candidates[g].is_factored) continue;
      // A state's newest cluster gets its row and leaf sum in the first build only: clear the
      // row so that the second build makes both again (the same values).
      for (const detail::ClusterNode* c : distinct[g]->live) {
        if (c->id + 1 == n + step) {
          const_cast<detail::Mpost2ClusterNode&>(static_cast<const detail::Mpost2ClusterNode&>(*c))
              .pair_weight_row.clear();
        }
      }
      detail::PairCandidates from_shared;
      from_shared.leaf_sums = records.leaf_sums();
      detail::build_candidates(*distinct[g], with_shared, from_shared);
      ASSERT_TRUE(from_shared.is_factored);
      const auto& exact = candidates[g].factored.row_sum;
      const auto& carried = from_shared.factored.row_sum;
      ASSERT_EQ(exact.size(), carried.size());
      for (std::size_t z = 0; z < exact.size(); ++z, ++compared) {
        EXPECT_NEAR(carried[z], exact[z], 1e-12 * exact[z] + 1e-300)
            << "step " << step << ", state " << g << ", live position " << z;
      }
    }
    testing_support::draw_all(states, distinct, candidates, step, own, 5, nodes, records);
  }
  EXPECT_GE(shared_steps, n / 4);
  EXPECT_GT(compared, n * n / 4);
}

}  // namespace
}  // namespace kingman
