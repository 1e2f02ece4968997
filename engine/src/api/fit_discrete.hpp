#pragma once
// fit() for the binary / multinomial likelihood (MODEL.md section 7).
#include "kingman/api.hpp"

namespace kingman::detail {

// Encodes the table, runs the greedy algorithm and fills the result (not seconds). Throws
// OptionError for SMC algorithms (not yet available), mgreedy and Brownian-only options.
FitResult fit_discrete(const Table& data, const FitOptions& options);

// smc_memory_bytes for the binary / multinomial likelihood.
std::size_t discrete_smc_memory_bytes(const Table& data, const FitOptions& options);

}  // namespace kingman::detail
