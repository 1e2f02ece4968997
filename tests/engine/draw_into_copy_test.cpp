// draw_and_merge into a separate state (proposals.hpp): a resampled copy that takes its
// ancestor's state in the same step as its merge (smc_driver.cpp defers the copies of a
// resampling to the next step's parallel loop) must end exactly where the ancestor's own copy,
// extended in place, ends: the same weight, merge, time, leaf sums and live clusters, whatever
// stale contents its buffers held. Every proposal kind, every step of a run.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "../../engine/src/inference/smc/pair_cache.hpp"
#include "../../engine/src/inference/smc/proposals.hpp"
#include "kingman/kernels/rng.hpp"
#include "random_whitened.hpp"
#include "step_records.hpp"

namespace kingman {
namespace {

detail::LeafPairs contents_for(Algorithm proposal) {
  if (proposal == Algorithm::priorprior) return detail::LeafPairs::on_demand;
  if (proposal == Algorithm::mpost2) return detail::LeafPairs::mpost2_weights;
  return detail::LeafPairs::distances;
}

TEST(DrawIntoCopy, TakingTheAncestorsStateWithTheMergeEqualsCopyingThenMerging) {
  const std::size_t n = 24, d = 6;
  const WhitenedData data = testing_support::random_whitened(n, d, 41);
  for (const Algorithm proposal : {Algorithm::priorprior, Algorithm::priorpost, Algorithm::postpost,
                                   Algorithm::mpost1, Algorithm::mpost2}) {
    const detail::LeafPairCache cache(data, contents_for(proposal), Mpost2RowSums::leaf_sums);
    const detail::StepContext context{proposal, n, d, 0.0, &cache};
    std::vector<std::unique_ptr<detail::ClusterNode>> nodes;
    detail::ParticleState state;
    for (std::size_t i = 0; i < n; ++i) {
      auto leaf = std::make_unique<detail::ClusterNode>();
      leaf->id = i;
      leaf->variance = 0.1;
      leaf->mean.assign(data.row(i), data.row(i) + d);
      state.live.push_back(leaf.get());
      nodes.push_back(std::move(leaf));
    }
    detail::ParticleState copy;  // stale buffers: another length, a foreign cluster
    testing_support::StepRecords records;
    for (std::size_t step = 0; step + 1 < n; ++step) {
      copy.live.assign(step % 3 + 1, nodes.back().get());
      detail::PairCandidates candidates;
      candidates.leaf_sums = records.leaf_sums();
      detail::build_candidates(state, context, candidates);
      detail::ParticleState in_place = state;
      detail::ChosenPairCache chosen_in_place, chosen_copy;
      std::unique_ptr<detail::ClusterNode> made_in_place, made_copy;
      kernels::RandomStream stream_in_place(9, 4, step + 1), stream_copy(9, 4, step + 1);
      const double alpha_in_place =
          detail::draw_and_merge(in_place, candidates, step, context, stream_in_place,
                                 chosen_in_place, made_in_place, records.merge());
      const double alpha_copy =
          detail::draw_and_merge(state, copy, candidates, step, context, stream_copy, chosen_copy,
                                 made_copy, records.merge());
      const std::string where = to_string(proposal) + ", step " + std::to_string(step);
      EXPECT_EQ(alpha_copy, alpha_in_place) << where;
      EXPECT_EQ(copy.time, in_place.time) << where;
      EXPECT_EQ(copy.leaf_sums, in_place.leaf_sums) << where;
      ASSERT_EQ(copy.history->merge.left, in_place.history->merge.left) << where;
      ASSERT_EQ(copy.history->merge.right, in_place.history->merge.right) << where;
      EXPECT_EQ(copy.history->merge.height, in_place.history->merge.height) << where;
      EXPECT_EQ(copy.history->previous, state.history) << where;
      ASSERT_EQ(copy.live.size(), in_place.live.size()) << where;
      for (std::size_t x = 0; x < copy.live.size(); ++x) {
        if (in_place.live[x] == made_in_place.get()) {
          EXPECT_EQ(copy.live[x], made_copy.get()) << where << ", position " << x;
          EXPECT_EQ(made_copy->mean, made_in_place->mean) << where;
        } else {
          EXPECT_EQ(copy.live[x], in_place.live[x]) << where << ", position " << x;
        }
      }
      state = in_place;
      nodes.push_back(std::move(made_in_place));
      nodes.push_back(std::move(made_copy));
    }
  }
}

}  // namespace
}  // namespace kingman
