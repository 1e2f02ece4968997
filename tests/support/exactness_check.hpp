#pragma once
// The statistical check of an SMC sampler against exact enumeration (MODEL.md section 9), shared
// by the exactness tests: independent runs with fixed seeds; the evidence estimate is unbiased
// on the natural scale (mean of evidence / exact within 4 standard errors of 1, and its log
// within 0.05), and the weighted particles reproduce the exact posterior of the first merge
// (within 4 standard errors + 1e-4, and 0.03) and of the topology. Each check also requires
// the standard errors to be small enough for the test to have power.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "exact_enumeration.hpp"
#include "kingman/api.hpp"

namespace kingman::testing_support {

// The mean of independent runs' values and its standard error.
struct Summary {
  double mean = 0.0, standard_error = 0.0;
};
Summary summarize(const std::vector<double>& values);

struct ExactnessRuns {
  int runs = 16;
  std::uint64_t first_seed = 3000;  // run r uses first_seed + r
  std::size_t particles = 2000;     // checked against each result
};

// Runs run_fit(seed) and checks it with gtest assertions; records the evidence ratio, its
// standard error and the largest deviation in standard errors as test properties prefixed by
// `label`.
void check_against_enumeration(const std::function<FitResult(std::uint64_t seed)>& run_fit,
                               const oracle::Enumeration& exact, const ExactnessRuns& runs,
                               const std::string& label);

}  // namespace kingman::testing_support
