#pragma once
// SMC particles stepped by hand whose lineages are pooled every few steps, as resampling pools
// them, so that a step's distinct states share a recent ancestor: for tests of what a step's
// states share (shared_row_sums.hpp, step_pair_tails.hpp).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "../../engine/src/inference/smc/proposals.hpp"
#include "kingman/model/whitened_data.hpp"
#include "step_records.hpp"

namespace kingman::testing_support {

// Every cluster a test makes, kept alive to its end.
using ClusterNodes = std::vector<std::unique_ptr<detail::ClusterNode>>;

// The leaves of `data` as clusters with variance `leaf_variance`, in order.
std::vector<const detail::ClusterNode*> make_leaves(const WhitenedData& data, double leaf_variance,
                                                    ClusterNodes& nodes);

// Before step `step`: every `period`-th step all lineages continue from particle 0, and every
// other odd step particles 3 and up continue from particle 1.
void pool_lineages(std::vector<detail::ParticleState>& states, std::size_t step,
                   std::size_t period);

// One pointer per distinct state (copies share their history), in particle order.
std::vector<const detail::ParticleState*> distinct_states(
    const std::vector<detail::ParticleState>& states);

// Each particle draws its merge of step `step` from the candidates built for its state
// (candidates[g] for distinct[g]) with the stream (seed, particle, step + 1).
void draw_all(std::vector<detail::ParticleState>& states,
              const std::vector<const detail::ParticleState*>& distinct,
              const std::vector<detail::PairCandidates>& candidates, std::size_t step,
              const detail::StepContext& context, std::uint64_t seed, ClusterNodes& nodes,
              StepRecords& records);

}  // namespace kingman::testing_support
