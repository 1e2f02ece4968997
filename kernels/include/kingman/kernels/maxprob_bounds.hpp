#pragma once
// Bounds on Greedy-MaxProb's pair scores for a row of pairs (MODEL.md section 4):
//     score = lambda delta - log N(eps; 0, s)
//           = lambda delta + (d / 2) (log 2 pi + log s) + eps / (2 s),
// with delta the pair's mode duration clamped at 0 and s = r + 2 delta. The step keeps the first
// pair of smallest score; the engine scores exactly, with libm's log, only the pairs these
// bounds cannot rule out (engine/src/inference/maxprob_row.hpp).
//
// Each score is approximated with a log within kMaxProbLogError of the true one (a polynomial
// without division: maxprob_bounds.cpp), and bracketed by a margin of kMaxProbMarginRelative
// times the sum of its terms' magnitudes, at least (d / 2) log(2 pi) kMaxProbMarginRelative:
// over 1 000 times the log's error in the score, (d / 2) kMaxProbLogError, plus the rounding of
// this evaluation and of the exact one (~1e-15 relative). Pairs whose scores lie within about
// 2e-6 of the smallest, relatively, are left to the exact score: in practice the minimum and
// its ties. In SIMD, the same IEEE operations in every copy.
#include <cstddef>

namespace kingman::kernels {

inline constexpr double kMaxProbLogError = 1e-9;
inline constexpr double kMaxProbMarginRelative = 1e-6;

// For k < count: writes durations[k], the pair's linear-scale mode duration clamped at 0
// (std::max(linear_mode_duration(lambda, dims, eps[k], offset[k]), 0.0) of mode_durations.hpp,
// bit for bit), and bounds lower[k] <= score_k <= upper[k] on the score computed from eps[k],
// offset[k] (the pair's r) and that duration. Where s is not a positive normal number, or the
// approximation is not finite, the pair has no bounds: lower -inf and upper +inf.
void maxprob_score_bounds(double lambda, double dims, const double* eps, const double* offset,
                          double* durations, double* lower, double* upper, std::size_t count);

}  // namespace kingman::kernels
