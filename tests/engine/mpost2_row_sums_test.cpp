// MPost2's two ways of summing pair weights to choose a pair (Mpost2RowSums): the leaf row sums
// carried from state to state must give the proposal of the dense sums up to their ~2^-30
// error, so with one seed both runs draw the same pairs and durations and their weights agree
// to that error; and leaf sums, like everything else, must not depend on the thread count.
// d = 64 makes the pair weights so peaked that a merged leaf often carries most of a row's sum
// away, which exercises the full recomputation as well as the subtraction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "../../engine/src/inference/smc/pair_cache.hpp"
#include "../../engine/src/inference/smc/proposals.hpp"
#include "kingman/inference/smc.hpp"
#include "kingman/kernels/rng.hpp"
#include "random_whitened.hpp"

namespace kingman {
namespace {

WhitenedData random_data(std::size_t n, std::size_t d, unsigned seed) {
  return testing_support::random_whitened(n, d, seed);
}

SmcResult run(const WhitenedData& data, double leaf_variance, Mpost2RowSums row_sums, int threads) {
  SmcOptions options;
  options.proposal = Algorithm::mpost2;
  options.particles = 48;
  options.seed = 7;
  options.threads = threads;
  options.mpost2_row_sums = row_sums;
  return run_smc(data, leaf_variance, options);
}

TEST(Mpost2RowSums, LeafSumsDrawWhatDenseSumsDraw) {
  for (const auto& [n, d, leaf_variance] :
       {std::tuple{40u, 64u, 0.0}, std::tuple{60u, 8u, 0.2}, std::tuple{33u, 200u, 0.0}}) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", d = " + std::to_string(d));
    const WhitenedData data = random_data(n, d, 11 + n);
    const SmcResult dense = run(data, leaf_variance, Mpost2RowSums::dense, 1);
    const SmcResult sums = run(data, leaf_variance, Mpost2RowSums::leaf_sums, 1);
    // Each step's weights differ by the sums' relative error (~2^-30) at most.
    EXPECT_NEAR(sums.log_evidence, dense.log_evidence, 1e-7 * static_cast<double>(n));
    EXPECT_EQ(sums.resampled_at, dense.resampled_at);
    ASSERT_EQ(sums.particles.size(), dense.particles.size());
    for (std::size_t s = 0; s < dense.particles.size(); ++s) {
      const auto& a = dense.particles[s].tree.merges;
      const auto& b = sums.particles[s].tree.merges;
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t k = 0; k < a.size(); ++k) {
        EXPECT_EQ(a[k].left, b[k].left) << "particle " << s << ", merge " << k;
        EXPECT_EQ(a[k].right, b[k].right) << "particle " << s << ", merge " << k;
        EXPECT_NEAR(a[k].height, b[k].height, 1e-9 * std::max(1.0, a[k].height));
      }
    }
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
  std::vector<std::unique_ptr<detail::ClusterNode>> nodes;
  std::vector<const detail::ClusterNode*> leaves;
  for (std::size_t i = 0; i < n; ++i) {
    auto leaf = std::make_unique<detail::ClusterNode>();
    leaf->id = i;
    leaf->mean.assign(data.row(i), data.row(i) + d);
    leaves.push_back(leaf.get());
    nodes.push_back(std::move(leaf));
  }
  detail::ParticleState dense_state, sums_state;
  dense_state.live = sums_state.live = leaves;
  const detail::StepContext dense_context{Algorithm::mpost2, n, d, 0.0, &dense_cache};
  const detail::StepContext sums_context{Algorithm::mpost2, n, d, 0.0, &sums_cache};
  std::size_t compared = 0;
  for (std::size_t step = 0; step + 1 < n; ++step) {
    detail::PairCandidates dense_pairs, sums_pairs;
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
    const double dense_alpha = detail::draw_and_merge(dense_state, dense_pairs, step, dense_context,
                                                      dense_stream, dense_chosen, dense_created);
    const double sums_alpha = detail::draw_and_merge(sums_state, sums_pairs, step, sums_context,
                                                     sums_stream, sums_chosen, sums_created);
    EXPECT_NEAR(sums_alpha, dense_alpha, 1e-8 * std::max(1.0, std::abs(dense_alpha)));
    ASSERT_EQ(sums_state.history->merge.left, dense_state.history->merge.left);
    ASSERT_EQ(sums_state.history->merge.right, dense_state.history->merge.right);
    nodes.push_back(std::move(dense_created));
    nodes.push_back(std::move(sums_created));
  }
  EXPECT_GT(compared, n * (n - 1) / 4);
}

}  // namespace
}  // namespace kingman
