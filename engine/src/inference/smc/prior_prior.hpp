#pragma once
// PriorPrior (MODEL.md section 5) on the Brownian model with complete data, in PriorPrior's own
// particle system (prior_prior_system.hpp): its step reads two live clusters and merges them in
// O(d), so a flat live list per particle, copied at every resampling and shifted at every
// merge, was most of its time at large n. (The binary / multinomial model and data with
// missing entries use the same system: discrete_smc.cpp, missing_smc.cpp.)
#include <memory>

#include "kingman/inference/smc.hpp"
#include "kingman/model/whitened_data.hpp"
#include "smc_loop.hpp"

namespace kingman::detail {

std::unique_ptr<ParticleSystem> make_prior_prior_system(const WhitenedData& data,
                                                        double leaf_variance,
                                                        const SmcOptions& options);

}  // namespace kingman::detail
