#include "maxprob_row.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "kingman/kernels/maxprob_bounds.hpp"
#include "kingman/kernels/vector_math.hpp"
#include "kingman/model/brownian_messages.hpp"

namespace kingman::detail {

double maxprob_pair_score(double lambda, double dims, double eps, double offset, double duration) {
  const double clamped = std::max(duration, 0.0);
  return lambda * clamped - log_local_likelihood(dims, eps, offset + 2.0 * clamped);
}

MaxProbRowMinimum maxprob_row_minimum(double lambda, double dims, const double* eps,
                                      const double* offset, std::size_t count, bool first_row) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  thread_local std::vector<double> durations, lower, upper;
  durations.resize(count);
  lower.resize(count);
  upper.resize(count);
  kernels::maxprob_score_bounds(lambda, dims, eps, offset, durations.data(), lower.data(),
                                upper.data(), count);
  // U, the smallest upper bound (+inf if no pair has bounds).
  const std::size_t least = kernels::first_minimum_below(upper.data(), count, kInf);
  const double bound = least < count ? upper[least] : kInf;
  // The pairs left (those without bounds have lower -inf) in row order: a later one replaces
  // the one kept only with a smaller score, and in the first row pair 0, if left, starts it
  // whatever its score. (If pair 0 is not left, its score is above the row's minimum, which a
  // later pair left then has.)
  MaxProbRowMinimum best{count, kInf, 0.0};
  for (std::size_t k = kernels::first_at_most(lower.data(), count, bound); k < count;
       k += 1 + kernels::first_at_most(lower.data() + k + 1, count - k - 1, bound)) {
    const double score = maxprob_pair_score(lambda, dims, eps[k], offset[k], durations[k]);
    if ((first_row && k == 0) || score < best.score) best = {k, score, durations[k]};
  }
  return best;
}

}  // namespace kingman::detail
