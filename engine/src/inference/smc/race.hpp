#pragma once
// Goerur & Teh's regenerative race ("SMC1", MODEL.md section 6) for the Brownian model: every
// pair draws one proposed merge time when it is created, the most recent one merges, and only
// the O(m) pairs of the merged and new clusters change per step (race.cpp).
#include <memory>

#include "kingman/inference/smc.hpp"
#include "kingman/model/whitened_data.hpp"
#include "smc_loop.hpp"

namespace kingman::detail {

std::unique_ptr<ParticleSystem> make_race_system(const WhitenedData& data, double leaf_variance,
                                                 const SmcOptions& options);

}  // namespace kingman::detail
