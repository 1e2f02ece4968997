#pragma once
// SMC for the Brownian model on data with missing entries (MODEL.md sections 3.4, 5 and 6):
// per-dimension messages, whose pair duration laws have no closed form (brownian_duration_law.hpp).
// PriorPrior, PriorPost, PostPost, MPost1 and MPost2 (law_proposal_system.hpp) and the race
// (race_engine.hpp).
#include <memory>

#include "kingman/inference/smc.hpp"
#include "kingman/model/whitened_data.hpp"
#include "smc_loop.hpp"

namespace kingman::detail {

// Whether `proposal` runs on data with missing entries.
bool handles_missing_entries(Algorithm proposal);

// The particle system of `options.proposal` (handles_missing_entries) for `data`.
std::unique_ptr<ParticleSystem> make_missing_data_system(const WhitenedData& data,
                                                         double leaf_variance,
                                                         const SmcOptions& options);

}  // namespace kingman::detail
