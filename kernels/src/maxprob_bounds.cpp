#include "kingman/kernels/maxprob_bounds.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kingman/kernels/mode_durations.hpp"
#include "simd_copies.hpp"
#include "vector_math_detail.hpp"

namespace kingman::kernels {

namespace {

// log 2 pi; only the approximation uses it, and the margin covers its last bit.
constexpr double kLogTwoPi = 1.8378770664093454836;

// log x for positive normal x, within 1e-9 absolute (kMaxProbLogError): x = 2^e m with m
// centred on 1 as in log_of_normal (vector_math_detail.hpp), then log(1 + f), f = m - 1 in
// [sqrt(1/2) - 1, sqrt(2) - 1), by a polynomial of degree 10 fitted by least squares on
// Chebyshev nodes (largest error 9.1e-10 on a grid of 400 001 points), by Estrin's scheme.
// Unlike log_of_normal's series in f / (2 + f) it needs no division: the bounds do not need its
// 1e-16, and this kernel's divisions and square root were most of its time.
[[gnu::always_inline]] inline double rough_log_of_normal(double x) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  double exponent = std::bit_cast<double>((bits >> 52) | std::uint64_t{0x4330000000000000});
  double mantissa = std::bit_cast<double>((bits & std::uint64_t{0x000fffffffffffff}) |
                                          std::uint64_t{0x3ff0000000000000});
  exponent = exponent - (0x1p52 + 1023.0);
  const bool high = mantissa > detail::kSqrt2;
  mantissa = high ? 0.5 * mantissa : mantissa;
  exponent = high ? exponent + 1.0 : exponent;
  const double f = mantissa - 1.0;
  const double f2 = f * f, f4 = f2 * f2, f8 = f4 * f4;
  const double p12 = 0.9999999961443468 + f * -0.49999974803889197;
  const double p34 = 0.3333337125828195 + f * -0.25002460462231335;
  const double p56 = 0.20000856361779865 + f * -0.16591602221198165;
  const double p78 = 0.14187371377534846 + f * -0.13369948302093765;
  const double p910 = 0.12928394606662064 + f * -0.07381923918237525;
  const double log_mantissa = f * (((p12 + f2 * p34) + f4 * (p56 + f2 * p78)) + f8 * p910);
  return exponent * detail::kLn2High + (exponent * detail::kLn2Low + log_mantissa);
}

// One element-wise loop with selects (the mode durations too, as in mode_durations.cpp), which GCC
// vectorizes (this file is compiled without trapping math, kernels/CMakeLists.txt).
struct MaxProbBoundsKernel {
  template <std::size_t>
  [[gnu::always_inline]] static void run(double lambda, double dims, const double* eps,
                                         const double* offset, double* durations, double* lower,
                                         double* upper, std::size_t count) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    constexpr double kLargest = std::numeric_limits<double>::max();
    constexpr double kSmallestNormal = std::numeric_limits<double>::min();
    const double half_dims = 0.5 * dims;
    const double* __restrict from_eps = eps;
    const double* __restrict from_offset = offset;
    double* __restrict to_durations = durations;
    double* __restrict to_lower = lower;
    double* __restrict to_upper = upper;
    for (std::size_t k = 0; k < count; ++k) {
      // std::max(duration, 0.0): NaN and -0 stay.
      const double unclamped = linear_mode_duration(lambda, dims, from_eps[k], from_offset[k]);
      const double duration = unclamped < 0.0 ? 0.0 : unclamped;
      to_durations[k] = duration;
      const double s = from_offset[k] + 2.0 * duration;
      const bool normal = s >= kSmallestNormal && s <= kLargest;
      const double log_s = rough_log_of_normal(normal ? s : 1.0);
      const double fit = lambda * duration;
      const double spread = half_dims * (kLogTwoPi + log_s);
      const double energy = from_eps[k] / (2.0 * s);
      const double approximate = (fit + spread) + energy;
      const double margin =
          kMaxProbMarginRelative *
          ((std::abs(fit) + half_dims * (kLogTwoPi + std::abs(log_s))) + std::abs(energy));
      // NaN fails both comparisons.
      const bool bounded = normal && std::abs(approximate) <= kLargest && margin <= kLargest;
      to_lower[k] = bounded ? approximate - margin : -kInf;
      to_upper[k] = bounded ? approximate + margin : kInf;
    }
  }
};

}  // namespace

void maxprob_score_bounds(double lambda, double dims, const double* eps, const double* offset,
                          double* durations, double* lower, double* upper, std::size_t count) {
  detail::run_in_copy<MaxProbBoundsKernel>(lambda, dims, eps, offset, durations, lower, upper,
                                           count);
}

}  // namespace kingman::kernels
