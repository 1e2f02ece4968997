#pragma once
// Sequential Monte Carlo over merge histories for the binary / multinomial model (MODEL.md
// sections 5 and 7): Teh et al.'s PriorPrior, PriorPost and PostPost proposals with exact
// incremental weights, ESS-triggered resampling and the unbiased evidence estimate. Settings
// and results are those of the Brownian SMC (smc.hpp).
#include "kingman/inference/smc.hpp"
#include "kingman/model/discrete_data.hpp"

namespace kingman {

// Runs options.proposal (priorprior, priorpost or postpost) on the encoded data; missing
// entries are allowed. log_evidence and every particle's log_weight include the base term
// sum over observed entries of log q_{d, x_id} (DiscreteData::log_base_term), so they estimate
// log p(x) as tree_density reports log p(x, tree). Throws OptionError for another algorithm or
// bad settings, InputError for fewer than two points, NumericalError if every particle's
// weight vanishes.
SmcResult run_smc(const DiscreteData& data, const SmcOptions& options);

}  // namespace kingman
