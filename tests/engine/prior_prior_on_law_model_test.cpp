// PriorPrior's system on a law-proposal model (prior_prior_system.hpp, PriorPriorOnLawModel),
// as the binary / multinomial and missing-entry models run it, against the step those models
// had before: a flat live list per particle (live_particle_state.hpp), the duration from the
// prior, a uniform pair, the model's merge and record_merge. The same weight for every
// particle at every step and the same trees, through resamplings that make copies diverge and
// stretches without resampling longer than a list keeps as patches. The toy model's clusters
// hold a std::once_flag, so they cannot be moved (as MissingClusterNode's cannot).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "../../engine/src/inference/smc/live_particle_state.hpp"
#include "../../engine/src/inference/smc/pair_numbering.hpp"
#include "../../engine/src/inference/smc/prior_prior_system.hpp"
#include "kingman/kernels/rng.hpp"
#include "kingman/model/coalescent_prior.hpp"
#include "step_records.hpp"

namespace kingman::detail {
namespace {

struct ToyNode {
  std::size_t id = 0;
  double time = 0.0;
  double value = 0.0;
  mutable std::uint64_t collect_mark = 0;  // ClusterPool's
  std::once_flag cannot_move;
};

// A law-proposal model's PriorPrior part: leaves, merge and its cost. The weight depends on
// both clusters, their order and the merge time, so a wrong pair, a swapped pair or a wrong
// time changes it. With kFillsSpares its merge fills the node it is handed (a spare of the
// system's pool, holding a cluster freed earlier), as the binary model's does; without, it
// makes a new one, as the missing-entry model's does.
template <bool kFillsSpares>
class ToyLawModel {
 public:
  using Node = ToyNode;
  static constexpr bool kMergeFillsSpareNodes = kFillsSpares;

  explicit ToyLawModel(std::vector<double> values) : values_(std::move(values)) {}

  std::size_t leaf_count() const { return values_.size(); }
  void fill_leaves(std::span<Node> leaves) const {
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      leaves[i].id = i;
      leaves[i].value = values_[i];
    }
  }
  std::size_t merge_work() const { return 8; }

  double merge(const Node& a, const Node& b, double t, std::size_t id,
               std::unique_ptr<Node>& merged) const {
    if (!kFillsSpares || !merged) merged = std::make_unique<Node>();
    merged->id = id;
    merged->time = t;
    merged->value = 0.75 * a.value + 0.25 * b.value + t;
    return -(a.value - b.value) * (a.value - b.value) + 0.5 * a.value + std::log1p(-t);
  }

 private:
  std::vector<double> values_;
};

using ToyState = LiveParticleState<ToyNode>;

// The flat-list step (the law-proposal system's PriorPrior step before prior_prior_system.hpp).
template <class Model>
double flat_step(const Model& model, ToyState& state, std::size_t step, std::size_t s,
                 std::uint64_t seed, std::vector<std::unique_ptr<ToyNode>>& nodes,
                 testing_support::StepRecords& records) {
  const std::size_t m = state.live.size(), pairs = m * (m - 1) / 2;
  kernels::RandomStream stream(seed, s, step + 1);
  const double t = state.time - stream.exponential() / coalescent_rate(m);
  const auto [x, y] = unrank_pair(stream.below(pairs), m);
  std::unique_ptr<ToyNode> merged;  // a new node each time
  const double log_z =
      model.merge(*state.live[x], *state.live[y], t, model.leaf_count() + step, merged);
  record_merge(state, x, y, std::move(merged), nodes.emplace_back(), records.merge());
  return log_z;
}

template <bool kFillsSpares>
void expect_same_run(std::size_t n, std::size_t particles, bool resample, std::uint64_t seed) {
  using Model = ToyLawModel<kFillsSpares>;
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = std::sin(1.7 * static_cast<double>(i) + 0.3);
  SmcOptions options;
  options.proposal = Algorithm::priorprior;
  options.particles = particles;
  options.seed = seed;
  PriorPriorSystem<PriorPriorOnLawModel<Model>> system(options, values);

  const Model model(values);
  std::vector<ToyNode> leaves(n);
  model.fill_leaves(leaves);
  ToyState first;
  for (const ToyNode& leaf : leaves) first.live.push_back(&leaf);
  std::vector<ToyState> reference(particles, first);
  std::vector<std::unique_ptr<ToyNode>> nodes;
  testing_support::StepRecords records;

  std::vector<double> log_alpha(particles);
  for (std::size_t step = 0; step + 1 < n; ++step) {
    system.extend(step, log_alpha);
    for (std::size_t s = 0; s < particles; ++s) {
      ASSERT_EQ(log_alpha[s], flat_step(model, reference[s], step, s, seed, nodes, records))
          << "step " << step << ", particle " << s;
    }
    // Resample at two steps of every three (copies of one state diverge at the next merge);
    // in the third, every particle keeps its state.
    if (resample && step % 3 != 2 && step + 2 < n) {
      std::vector<std::size_t> ancestors(particles);
      for (std::size_t s = 0; s < particles; ++s) ancestors[s] = (s * 5 + step) % 4;
      system.resample(ancestors);
      std::vector<ToyState> next(particles);
      for (std::size_t s = 0; s < particles; ++s) next[s] = reference[ancestors[s]];
      reference = next;
    }
  }
  for (std::size_t s = 0; s < particles; ++s) {
    const MergeTree tree = system.tree(s);
    const MergeTree expected = live_merge_tree(reference[s], n);
    ASSERT_EQ(tree.merges.size(), n - 1);
    ASSERT_EQ(expected.merges.size(), n - 1);
    for (std::size_t k = 0; k + 1 < n; ++k) {
      EXPECT_EQ(tree.merges[k].left, expected.merges[k].left) << s << " " << k;
      EXPECT_EQ(tree.merges[k].right, expected.merges[k].right) << s << " " << k;
      EXPECT_EQ(tree.merges[k].height, expected.merges[k].height) << s << " " << k;
    }
  }
}

TEST(PriorPriorOnLawModel, DrawsWhatTheFlatListStepDraws) {
  expect_same_run<false>(60, 9, true, 31);
  expect_same_run<true>(60, 9, true, 31);  // merges into spare nodes
}

// One particle, never resampled: more merges than a list keeps as patches, so its lookups run
// through many patches and its list is written out alone.
TEST(PriorPriorOnLawModel, OneParticleWithoutResamplingMatchesTheFlatListStep) {
  expect_same_run<false>(50, 1, false, 8);
  expect_same_run<true>(50, 1, false, 8);
}

}  // namespace
}  // namespace kingman::detail
