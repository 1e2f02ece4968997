#pragma once
// Two SMC runs that must have made the same draws: the same merges in every particle, heights
// within `height_tolerance` relative, log evidence within `evidence_tolerance` (absolute), the
// same resampling steps. For speed-only options (shared kernels, shared laws, pairs left out by
// bounds), whose values may differ by rounding but whose choices must not.
#include "kingman/inference/smc.hpp"

namespace kingman::testing_support {

void expect_same_draws(const SmcResult& a, const SmcResult& b, double evidence_tolerance,
                       double height_tolerance);

}  // namespace kingman::testing_support
