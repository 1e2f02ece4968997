#pragma once
// Sums over dimensions that carry their own offsets: a Brownian pair whose clusters observe
// different dimensions (missing entries) has per dimension j a squared difference D_j and a
// variance s_j = (r_j - base) + x at the point x of the merge-time search (MODEL.md section 4).
// Every such pair's mode search evaluates these sums a few times, and Greedy-Rate1 searches for
// every pair, so they run eight dimensions per SIMD step.
#include <cstddef>

namespace kingman::kernels {

// Entries per block: callers pad their arrays to a multiple of this with offset +inf and D = 0,
// entries whose terms are exact zeros.
inline constexpr std::size_t kOffsetBlock = 8;

// What gather_offsets returns of the dimensions both clusters observe.
struct OffsetSummary {
  std::size_t count;            // how many
  double least, greatest, sum;  // of their offsets (least = +inf, greatest = -inf when none)
  double squared_distance;      // sum of their D_j
};

// The pair terms of two clusters (means and variances per dimension, +inf where the cluster
// observes no leaf's value) in the layout offset_slope reads: for each of the d dimensions, in
// place j of `offsets` and `squared_deltas`, r_j = (v_lj + v_rj) + dt and D_j = (y_lj - y_rj)^2
// where both variances are finite, else the padding entry (+inf, 0). The four input rows are
// read, and the two outputs written, to padded_size(d): the rows' places after d must hold
// variance +inf (BrownianMessages pads them so). The summary's sums run in eight interleaved
// partial sums joined in a fixed order, the same bits from every SIMD copy. (The summary is
// written in place: returned, its fields were stored one by one and loaded two at a time by the
// caller, a store-forwarding stall on every pair.)
void gather_offsets(const double* left_mean, const double* left_variance, const double* right_mean,
                    const double* right_variance, std::size_t d, double dt, double* offsets,
                    double* squared_deltas, OffsetSummary& summary);

// d rounded up to whole blocks.
inline constexpr std::size_t padded_size(std::size_t d) {
  return (d + kOffsetBlock - 1) / kOffsetBlock * kOffsetBlock;
}

struct OffsetSlope {
  double value;   // sum_j (D_j / s_j - 1) / s_j
  double change;  // its derivative in x: sum_j (1 - 2 D_j / s_j) / s_j^2
};

// The two sums over `count` entries (a multiple of kOffsetBlock), s_j = (offsets[j] - base) + x,
// each term as written above with 1 / s_j computed once, in eight interleaved partial sums
// joined in a fixed order: the same bits from every SIMD copy.
OffsetSlope offset_slope(const double* offsets, const double* squared_deltas, std::size_t count,
                         double base, double x);

// The terms of phi'(x) beside the dimensions' (merge_duration.hpp): phi'(x) = offset_slope's
// value - rate + 2 reference_weight / (reference_gap + x), phi''(x) = its change -
// 2 reference_weight / (reference_gap + x)^2.
struct OffsetNewtonTerms {
  double rate;              // lambda
  double reference_weight;  // 0 (linear-scale mode) or 1 (log-scale)
  double reference_gap;     // mean r - base
};

struct OffsetNewton {
  bool converged;
  double x;  // the root if converged
};

// Plain Newton steps on phi' from `start`, as long as phi'' < 0 and each step stays inside the
// bracket that the signs seen give and above `floor`, for at most eight steps: converged when a
// step moves x by at most 2^-52 of it (phi' is then at its rounding noise), and the root is
// that step's end clamped to the bracket. The usual case of the search, about four slope
// evaluations, in one call with the sums inline.
OffsetNewton offset_newton(const double* offsets, const double* squared_deltas, std::size_t count,
                           double base, const OffsetNewtonTerms& terms, double start, double floor);

// The same sums term by term in index order: the reference the tests hold offset_slope to.
OffsetSlope offset_slope_reference(const double* offsets, const double* squared_deltas,
                                   std::size_t count, double base, double x);

}  // namespace kingman::kernels
