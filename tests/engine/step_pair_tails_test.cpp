// PostPost's and MPost1's pair kernels shared by the states of a step (step_pair_tails.hpp):
// every pair score of every state must be the same bits as the state computing its own, the
// table must actually serve pairs (several states list them), and whole runs must not depend
// on the sharing or on the thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "../../engine/src/inference/smc/pair_cache.hpp"
#include "../../engine/src/inference/smc/proposals.hpp"
#include "../../engine/src/inference/smc/step_pair_tails.hpp"
#include "kingman/inference/smc.hpp"
#include "kingman/kernels/rng.hpp"
#include "kingman/model/coalescent_prior.hpp"
#include "pooled_lineages.hpp"
#include "random_whitened.hpp"

namespace kingman {
namespace {

// Five particles whose lineages are pooled every few steps (as resampling does); at every step
// each distinct state's scores with the step's shared kernels against its own.
void expect_shared_scores_match(Algorithm proposal, double leaf_variance) {
  const std::size_t n = 40, d = 6, particles = 5;
  const WhitenedData data = testing_support::random_whitened(n, d, 41);
  const detail::LeafPairCache cache(data, detail::LeafPairs::distances);
  testing_support::ClusterNodes nodes;
  const auto leaves = testing_support::make_leaves(data, leaf_variance, nodes);
  std::vector<detail::ParticleState> states(particles);
  for (auto& state : states) state.live = leaves;
  const detail::StepContext own{proposal, n, d, 0.0, &cache};
  detail::StepPairTails tails(SmcOptions{}.step_table_bytes);
  testing_support::StepRecords records;
  detail::StepContext with_tails = own;
  with_tails.pair_tails = &tails;
  std::size_t compared = 0, served = 0;
  for (std::size_t step = 0; step + 1 < n; ++step) {
    testing_support::pool_lineages(states, step, 4);
    const auto distinct = testing_support::distinct_states(states);
    ASSERT_TRUE(tails.prepare(distinct, 1.0 - 0.5 * static_cast<double>(d),
                              coalescent_rate(n - step), cache, proposal == Algorithm::mpost1));
    std::vector<detail::PairCandidates> candidates(distinct.size());
    for (std::size_t g = 0; g < distinct.size(); ++g) {
      detail::build_candidates(*distinct[g], own, candidates[g]);
      detail::PairCandidates shared;
      detail::build_candidates(*distinct[g], with_tails, shared);
      ASSERT_EQ(shared.log_score.size(), candidates[g].log_score.size());
      for (std::size_t c = 0; c < shared.log_score.size(); ++c, ++compared)
        ASSERT_EQ(shared.log_score[c], candidates[g].log_score[c])
            << "step " << step << ", state " << g << ", pair " << c;
      for (const detail::ClusterNode* c : distinct[g]->live)
        served += tails.index_of(*c) != detail::StepPairTails::kNoIndex;
    }
    testing_support::draw_all(states, distinct, candidates, step, own, 5, nodes, records);
  }
  EXPECT_GT(compared, particles * n * n / 8);
  // Most listed clusters are shared by two or more states.
  EXPECT_GT(served, compared / n);
}

TEST(StepPairTails, PostPostScoresAreTheStatesOwn) {
  expect_shared_scores_match(Algorithm::postpost, 0.0);
  expect_shared_scores_match(Algorithm::postpost, 0.3);
}

TEST(StepPairTails, Mpost1ScoresAreTheStatesOwn) {
  expect_shared_scores_match(Algorithm::mpost1, 0.0);
}

// Two states over four leaves of their own (the nodes carry a table's stamps, so each table
// gets fresh ones) that list leaves 0 and 1 both, leaf 2 the first alone, leaf 3 the second.
struct TwoStates {
  explicit TwoStates(const WhitenedData& data)
      : leaves(testing_support::make_leaves(data, 0.0, nodes)) {
    first.live = {leaves[0], leaves[1], leaves[2]};
    second.live = {leaves[0], leaves[1], leaves[3]};
    both = {&first, &second};
  }
  testing_support::ClusterNodes nodes;
  std::vector<const detail::ClusterNode*> leaves;
  detail::ParticleState first, second;
  std::vector<const detail::ParticleState*> both;
};

// A cluster listed by one state only gets no index (its pairs cannot be shared), and a kernel
// from the table is the kernel computed directly.
TEST(StepPairTails, IndexesOnlyClustersThatSeveralStatesList) {
  const WhitenedData data = testing_support::random_whitened(4, 3, 7);
  const detail::LeafPairCache cache(data, detail::LeafPairs::distances);
  TwoStates two(data);
  const auto& leaves = two.leaves;
  detail::StepPairTails tails(SmcOptions{}.step_table_bytes);
  ASSERT_TRUE(tails.prepare(two.both, -0.5, 6.0, cache, false));
  const std::uint32_t i = tails.index_of(*leaves[0]), j = tails.index_of(*leaves[1]);
  EXPECT_NE(i, detail::StepPairTails::kNoIndex);
  EXPECT_NE(j, detail::StepPairTails::kNoIndex);
  EXPECT_NE(i, j);
  EXPECT_EQ(tails.index_of(*leaves[2]), detail::StepPairTails::kNoIndex);
  EXPECT_EQ(tails.index_of(*leaves[3]), detail::StepPairTails::kNoIndex);
  const double chi = cache.eps(*leaves[0], *leaves[1]);
  const kernels::GigUpperTail direct(-0.5, chi, 6.0);
  for (const double r : {1e-3, 0.7, 40.0}) {
    EXPECT_EQ(tails.tail(i, j, chi).log_scaled(r), direct.log_scaled(r));
    EXPECT_EQ(tails.tail(j, i, chi).log_scaled(r), direct.log_scaled(r));
  }
  EXPECT_EQ(tails.tail(i, j, chi).log_normalizer(), direct.log_normalizer());
  // The next step's indices replace this step's: a cluster no longer shared loses its index.
  ASSERT_TRUE(tails.prepare(std::vector<const detail::ParticleState*>{&two.first}, -0.5, 3.0, cache,
                            false));
  EXPECT_EQ(tails.index_of(*leaves[0]), detail::StepPairTails::kNoIndex);
}

// A table of one pair's kernel holds a step that shares one pair; a byte less, and the step
// goes without.
TEST(StepPairTails, StepsBeyondTheTableSizeGoWithout) {
  const WhitenedData data = testing_support::random_whitened(4, 3, 7);
  const detail::LeafPairCache cache(data, detail::LeafPairs::distances);
  for (const std::size_t bytes :
       {detail::StepPairTails::kBytesPerPair, detail::StepPairTails::kBytesPerPair - 1}) {
    TwoStates two(data);
    detail::StepPairTails tails(bytes);
    const bool fits = bytes == detail::StepPairTails::kBytesPerPair;
    EXPECT_EQ(tails.prepare(two.both, -0.5, 6.0, cache, false), fits);
    EXPECT_EQ(tails.index_of(*two.leaves[0]) != detail::StepPairTails::kNoIndex, fits);
  }
}

SmcResult run(const WhitenedData& data, Algorithm proposal, int threads, bool share,
              std::size_t table_bytes = SmcOptions{}.step_table_bytes) {
  SmcOptions options;
  options.step_table_bytes = table_bytes;
  options.proposal = proposal;
  options.particles = 24;
  options.seed = 9;
  options.threads = threads;
  options.share_pair_kernels = share;
  return run_smc(data, 0.0, options);
}

void expect_identical(const SmcResult& a, const SmcResult& b) {
  EXPECT_EQ(a.log_evidence, b.log_evidence);
  EXPECT_EQ(a.resampled_at, b.resampled_at);
  ASSERT_EQ(a.particles.size(), b.particles.size());
  for (std::size_t s = 0; s < a.particles.size(); ++s) {
    EXPECT_EQ(a.particles[s].log_weight, b.particles[s].log_weight);
    ASSERT_EQ(a.particles[s].tree.merges.size(), b.particles[s].tree.merges.size());
    for (std::size_t k = 0; k < a.particles[s].tree.merges.size(); ++k)
      EXPECT_EQ(a.particles[s].tree.merges[k].height, b.particles[s].tree.merges[k].height);
  }
}

// Whole runs: the same bits with and without the shared kernels, with a table too small for
// the early steps (shared only once few clusters are left), and on 1 or 2 threads.
TEST(StepPairTails, RunsIgnoreSharingTheTableSizeAndTheThreadCount) {
  const WhitenedData data = testing_support::random_whitened(36, 10, 3);
  for (const Algorithm proposal : {Algorithm::postpost, Algorithm::mpost1}) {
    SCOPED_TRACE(to_string(proposal));
    const SmcResult own = run(data, proposal, 1, false);
    const SmcResult shared = run(data, proposal, 1, true);
    expect_identical(own, shared);
    expect_identical(shared, run(data, proposal, 1, true, 64 * 40));
    expect_identical(shared, run(data, proposal, 2, true));
  }
}

}  // namespace
}  // namespace kingman
