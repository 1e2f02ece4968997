#pragma once
// The merge durations of Greedy-MinDuration and MGreedy (MODEL.md section 4) for a row of
// pairs. A pair with squared distance eps, duration offset r and total rate lambda has the joint
// density g(delta) = exp(-lambda delta) N(eps; 0, s) in its duration, s = r + 2 delta; the
// duration is g's mode in linear scale (Teh et al.'s delta*) or in the log scale of s (Henao &
// Lucas's MGreedy), unclamped (it may be negative).
//
// The rescanning greedy algorithms score every live pair at every step, O(n^3) pairs in all:
// mode_durations takes a row of them in one call, its square roots and divisions in SIMD, where
// each pair was a function call with a scalar square root and division (1.1 s of MGreedy at
// n = 1 000 before; bench/RESULTS.md, Engine: greedy, thirty-second session). The one-pair forms
// below are the reference, and what the engine's one-pair functions compute
// (kingman/inference/merge_duration.hpp); the row kernel performs the same IEEE operations in
// the same order, so every entry has the one-pair form's bits, in every copy
// (tests/kernels/mode_durations_test.cpp).
#include <cmath>
#include <cstddef>

namespace kingman::kernels {

enum class ModeScale { linear, log };

// Linear scale: s* = (sqrt(d^2 + 4 lambda eps) - d) / (2 lambda), rationalized so that a small
// lambda eps does not cancel; delta* = (s* - r) / 2.
inline double linear_mode_duration(double lambda, double dims, double eps, double offset) {
  const double s = 2.0 * eps / (std::sqrt(dims * dims + 4.0 * lambda * eps) + dims);
  return 0.5 * (s - offset);
}

// Log scale of s: s* = (l + sqrt(l^2 + lambda eps)) / lambda with l = 1 - d/2; for l < 0 the
// sum cancels, so s* = eps / (sqrt(l^2 + lambda eps) - l) instead. delta* = (s* - r) / 2.
inline double log_mode_duration(double lambda, double dims, double eps, double offset) {
  const double shape = 1.0 - 0.5 * dims;
  const double root = std::sqrt(shape * shape + lambda * eps);
  const double s = shape >= 0.0 ? (shape + root) / lambda : eps / (root - shape);
  return 0.5 * (s - offset);
}

// out[k] = the duration in `scale` for (lambda, dims, eps[k], offset[k]), k < count, bit for bit
// the one-pair form's. `out` may be `eps` or `offset`.
void mode_durations(ModeScale scale, double lambda, double dims, const double* eps,
                    const double* offset, double* out, std::size_t count);

}  // namespace kingman::kernels
