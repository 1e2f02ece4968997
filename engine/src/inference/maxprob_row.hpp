#pragma once
// Greedy-MaxProb's choice within one row of pairs on complete data (MODEL.md section 4):
//     score_k = lambda delta_k - log N(x_k; s_k)
//             = lambda delta_k + (d / 2) (log 2 pi + log s_k) + eps_k / (2 s_k),
// with s_k = r_k + 2 delta_k, from the pair's linear-scale mode duration delta_k clamped at 0.
// The step keeps the row's first smallest score, so only the scores that can be that minimum
// are needed exactly.
//
// Every score is first bounded in SIMD (kernels/maxprob_bounds.hpp): lower_k <= score_k <=
// upper_k, from an approximate log. With U = min_k upper_k, the row's minimum is at most U, and a
// pair with lower_k > U has a score above it: such a pair can be neither the first minimum nor
// equal to it. Every other pair (in practice the minimum and exact ties with it), and every pair
// without bounds (s not a positive normal number, or an approximation that is not finite), gets
// the score the one-pair form computes, libm's log included, bit for bit, and the row's first
// minimum is taken among those. So it is the one that scoring every pair exactly finds, and so
// is the step's choice among the rows' minima (best_live_pair.hpp): the same tree. A libm log and
// a division per pair had been ~80 % of a MaxProb run at n = 1 000.
#include <cstddef>

namespace kingman::detail {

// A row's first minimum: the pair's index k (count if there is none), its exact score and its
// clamped mode duration.
struct MaxProbRowMinimum {
  std::size_t index;
  double score, duration;
};

// The first minimum of the row of `count` pairs with squared distances eps[k] and offsets r_k
// (offset[k], the pair's a_l + a_r - 2 T), by best_live_pair.hpp's rules: with `first_row`, pair
// 0 whatever its score unless a later one is smaller; otherwise the first of the smallest scores
// below +inf. `dims` is d, `lambda` the step's coalescent rate.
MaxProbRowMinimum maxprob_row_minimum(double lambda, double dims, const double* eps,
                                      const double* offset, std::size_t count, bool first_row);

// The one-pair form (lambda * max(delta, 0) - log_local_likelihood) from the pair's mode
// duration delta: the exact score, which the row form reproduces wherever a score can matter.
double maxprob_pair_score(double lambda, double dims, double eps, double offset, double duration);

}  // namespace kingman::detail
