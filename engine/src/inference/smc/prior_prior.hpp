#pragma once
// PriorPrior (MODEL.md section 5) as a particle system of its own: its step reads two live
// clusters and merges them in O(d), so a flat live list per particle, copied at every
// resampling and shifted at every merge, was most of its time at large n (PatchedLiveList).
#include <memory>

#include "kingman/inference/smc.hpp"
#include "kingman/model/whitened_data.hpp"
#include "smc_loop.hpp"

namespace kingman::detail {

std::unique_ptr<ParticleSystem> make_prior_prior_system(const WhitenedData& data,
                                                        double leaf_variance,
                                                        const SmcOptions& options);

}  // namespace kingman::detail
