// PriorPrior's own particle system (prior_prior.cpp) against the generic proposal step
// (draw_and_merge's PriorPrior case on flat live lists): the same weight for every particle at
// every step and the same trees, through resamplings that make copies diverge (lists written
// out) and particles that go unresampled for more merges than a list keeps as patches.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "../../engine/src/inference/smc/pair_cache.hpp"
#include "../../engine/src/inference/smc/prior_prior.hpp"
#include "../../engine/src/inference/smc/proposals.hpp"
#include "kingman/kernels/rng.hpp"
#include "random_whitened.hpp"
#include "step_records.hpp"

namespace kingman::detail {
namespace {

// The first state of the generic step: every point a leaf (owned by `nodes`).
ParticleState leaf_state(const WhitenedData& data, double leaf_variance,
                         std::vector<std::unique_ptr<ClusterNode>>& nodes) {
  ParticleState state;
  for (std::size_t i = 0; i < data.n; ++i) {
    auto leaf = std::make_unique<ClusterNode>();
    leaf->id = i;
    leaf->variance = leaf_variance;
    leaf->mean.assign(data.row(i), data.row(i) + data.d);
    state.live.push_back(leaf.get());
    nodes.push_back(std::move(leaf));
  }
  return state;
}

TEST(PriorPriorSystem, DrawsWhatTheGenericStepDraws) {
  const std::size_t n = 60, d = 5, particles = 9;
  const WhitenedData data = testing_support::random_whitened(n, d, 17);
  const double leaf_variance = 0.2;
  SmcOptions options;
  options.proposal = Algorithm::priorprior;
  options.particles = particles;
  options.seed = 31;
  const std::unique_ptr<ParticleSystem> system =
      make_prior_prior_system(data, leaf_variance, options);

  // The reference: flat states extended by draw_and_merge with the system's streams.
  const LeafPairCache cache(data, LeafPairs::on_demand);
  const StepContext context{Algorithm::priorprior, n, d, data.log_det_lambda, &cache};
  std::vector<std::unique_ptr<ClusterNode>> nodes;
  std::vector<ParticleState> reference(particles, leaf_state(data, leaf_variance, nodes));
  testing_support::StepRecords records;

  std::vector<double> log_alpha(particles);
  for (std::size_t step = 0; step + 1 < n; ++step) {
    system->extend(step, log_alpha);
    for (std::size_t s = 0; s < particles; ++s) {
      const PairCandidates none;
      ChosenPairCache chosen;
      std::unique_ptr<ClusterNode> made;
      kernels::RandomStream stream(options.seed, s, step + 1);
      const double expected =
          draw_and_merge(reference[s], none, step, context, stream, chosen, made, records.merge());
      ASSERT_EQ(log_alpha[s], expected) << "step " << step << ", particle " << s;
      nodes.push_back(std::move(made));
    }
    // Resample at two steps of every three (copies of one state diverge at the next merge);
    // in the third, every particle keeps its state (patches accumulate past the limit).
    if (step % 3 != 2 && step + 2 < n) {
      std::vector<std::size_t> ancestors(particles);
      for (std::size_t s = 0; s < particles; ++s) ancestors[s] = (s * 5 + step) % 4;
      system->resample(ancestors);
      std::vector<ParticleState> next(particles);
      for (std::size_t s = 0; s < particles; ++s) next[s] = reference[ancestors[s]];
      reference = next;
    }
  }
  for (std::size_t s = 0; s < particles; ++s) {
    const MergeTree tree = system->tree(s);
    const MergeTree expected = to_merge_tree(reference[s], n);
    ASSERT_EQ(tree.merges.size(), expected.merges.size());
    for (std::size_t k = 0; k < tree.merges.size(); ++k) {
      EXPECT_EQ(tree.merges[k].left, expected.merges[k].left) << s << " " << k;
      EXPECT_EQ(tree.merges[k].right, expected.merges[k].right) << s << " " << k;
      EXPECT_EQ(tree.merges[k].height, expected.merges[k].height) << s << " " << k;
    }
  }
}

// One particle, never resampled: it collects more merges than a list keeps as patches, so its
// lookups run through many patches and its list is written out alone.
TEST(PriorPriorSystem, OneParticleWithoutResamplingMatchesTheGenericStep) {
  const std::size_t n = 50, d = 3;
  const WhitenedData data = testing_support::random_whitened(n, d, 3);
  SmcOptions options;
  options.proposal = Algorithm::priorprior;
  options.particles = 1;
  options.seed = 8;
  const std::unique_ptr<ParticleSystem> system = make_prior_prior_system(data, 0.0, options);
  const LeafPairCache cache(data, LeafPairs::on_demand);
  const StepContext context{Algorithm::priorprior, n, d, data.log_det_lambda, &cache};
  std::vector<std::unique_ptr<ClusterNode>> nodes;
  ParticleState state = leaf_state(data, 0.0, nodes);
  testing_support::StepRecords records;
  std::vector<double> log_alpha(1);
  for (std::size_t step = 0; step + 1 < n; ++step) {
    system->extend(step, log_alpha);
    const PairCandidates none;
    ChosenPairCache chosen;
    std::unique_ptr<ClusterNode> made;
    kernels::RandomStream stream(options.seed, 0, step + 1);
    ASSERT_EQ(log_alpha[0],
              draw_and_merge(state, none, step, context, stream, chosen, made, records.merge()))
        << "step " << step;
    nodes.push_back(std::move(made));
  }
}

}  // namespace
}  // namespace kingman::detail
