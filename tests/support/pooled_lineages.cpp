#include "pooled_lineages.hpp"

#include <algorithm>

#include "kingman/kernels/rng.hpp"

namespace kingman::testing_support {

std::vector<const detail::ClusterNode*> make_leaves(const WhitenedData& data, double leaf_variance,
                                                    ClusterNodes& nodes) {
  std::vector<const detail::ClusterNode*> leaves;
  for (std::size_t i = 0; i < data.n; ++i) {
    auto leaf = std::make_unique<detail::ClusterNode>();
    leaf->id = i;
    leaf->variance = leaf_variance;
    leaf->mean.assign(data.row(i), data.row(i) + data.d);
    leaves.push_back(leaf.get());
    nodes.push_back(std::move(leaf));
  }
  return leaves;
}

void pool_lineages(std::vector<detail::ParticleState>& states, std::size_t step,
                   std::size_t period) {
  if (step % period == period - 1) {
    for (std::size_t s = 1; s < states.size(); ++s) states[s] = states[0];
  } else if (step % 2 == 1) {
    for (std::size_t s = 3; s < states.size(); ++s) states[s] = states[1];
  }
}

std::vector<const detail::ParticleState*> distinct_states(
    const std::vector<detail::ParticleState>& states) {
  std::vector<const detail::ParticleState*> distinct;
  for (const auto& state : states) {
    if (std::none_of(distinct.begin(), distinct.end(), [&](const detail::ParticleState* other) {
          return other->history == state.history;
        }))
      distinct.push_back(&state);
  }
  return distinct;
}

void draw_all(std::vector<detail::ParticleState>& states,
              const std::vector<const detail::ParticleState*>& distinct,
              const std::vector<detail::PairCandidates>& candidates, std::size_t step,
              const detail::StepContext& context, std::uint64_t seed, ClusterNodes& nodes,
              StepRecords& records) {
  std::vector<detail::ParticleState> next = states;
  for (std::size_t s = 0; s < states.size(); ++s) {
    std::size_t g = 0;
    while (distinct[g]->history != states[s].history) ++g;
    detail::ChosenPairCache chosen;
    std::unique_ptr<detail::ClusterNode> created;
    kernels::RandomStream stream(seed, s, step + 1);
    detail::draw_and_merge(states[s], next[s], candidates[g], step, context, stream, chosen,
                           created, records.merge());
    nodes.push_back(std::move(created));
  }
  states = std::move(next);
}

}  // namespace kingman::testing_support
