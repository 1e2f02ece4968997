#pragma once
// The regenerative race (MODEL.md section 6) for the binary / multinomial likelihood
// (section 7): the engine of race_engine.hpp with each pair's clock law computed by quadrature
// and drawn by exact inversion (DiscreteDurationLaw with rate 1, started at the pair's creation).
#include <memory>

#include "kingman/inference/smc.hpp"
#include "kingman/model/discrete_data.hpp"
#include "smc_loop.hpp"

namespace kingman::detail {

std::unique_ptr<ParticleSystem> make_discrete_race_system(const DiscreteData& data,
                                                          const SmcOptions& options);

}  // namespace kingman::detail
