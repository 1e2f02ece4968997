#include "kingman/kernels/offset_sums.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "lane_sums.hpp"
#include "simd_copies.hpp"

namespace kingman::kernels {

static_assert(kOffsetBlock == kLanes);

namespace {

// The lanes' minimum and maximum, joined in a fixed order (min and max of doubles that are not
// NaN are exact: any order gives the same value).
template <std::size_t W>
[[gnu::always_inline]] inline double least_lane(const Block<W>& lanes) {
  double least = lanes[0];
  for (std::size_t l = 1; l < kLanes; ++l) least = lanes[l] < least ? lanes[l] : least;
  return least;
}
template <std::size_t W>
[[gnu::always_inline]] inline double greatest_lane(const Block<W>& lanes) {
  double greatest = lanes[0];
  for (std::size_t l = 1; l < kLanes; ++l) greatest = lanes[l] > greatest ? lanes[l] : greatest;
  return greatest;
}

// The eight lanes of a sum joined, with no tail.
template <std::size_t W>
[[gnu::always_inline]] inline double joined(const Block<W>& lanes) {
  return finish_sum<W>(lanes, 0, 0, [](std::size_t) { return 0.0; });
}

struct GatherOffsetsKernel {
  template <std::size_t W>
  [[gnu::always_inline]] static void run(const double* left_mean, const double* left_variance,
                                         const double* right_mean, const double* right_variance,
                                         std::size_t d, double dt, double* offsets,
                                         double* squared_deltas, OffsetSummary* summary) {
    using Lanes = Block<W>;
    const Lanes infinite = Lanes::splat(std::numeric_limits<double>::infinity());
    const Lanes zero = Lanes::zero(), one = Lanes::splat(1.0);
    Lanes counts = zero, least = infinite, greatest = -infinite, sums = zero, distances = zero;
    const std::size_t padded = padded_size(d);
    for (std::size_t k = 0; k < padded; k += kLanes) {
      const Lanes lm = Lanes::load(left_mean + k), lv = Lanes::load(left_variance + k);
      const Lanes rm = Lanes::load(right_mean + k), rv = Lanes::load(right_variance + k);
      // Selects only (&& of masks became scalar compares and jumps).
      const Lanes variances = lv + rv;
      const auto both = variances < infinite;
      const Lanes difference = lm - rm;
      const Lanes offset = simd::select(both, variances + dt, infinite);
      const Lanes squared = simd::select(both, difference * difference, zero);
      offset.store(offsets + k);
      squared.store(squared_deltas + k);
      counts += simd::select(both, one, zero);
      least = simd::select(offset < least, offset, least);  // unshared lanes hold +inf
      const Lanes shared_offset = simd::select(both, offset, -infinite);
      greatest = simd::select(shared_offset > greatest, shared_offset, greatest);
      sums += simd::select(both, offset, zero);
      distances += squared;
    }
    summary->count = static_cast<std::size_t>(joined<W>(counts));
    summary->least = least_lane<W>(least);
    summary->greatest = greatest_lane<W>(greatest);
    summary->sum = joined<W>(sums);
    summary->squared_distance = joined<W>(distances);
  }
};

// offset_slope's sums, inline in each copy that uses them.
template <std::size_t W>
[[gnu::always_inline]] inline OffsetSlope slope_sums(const double* offsets,
                                                     const double* squared_deltas,
                                                     std::size_t count, double base, double x) {
  using Lanes = Block<W>;
  Lanes values = Lanes::zero(), changes = Lanes::zero();
  for (std::size_t k = 0; k < count; k += kLanes) {
    const Lanes offset = Lanes::load(offsets + k);
    const Lanes squared_delta = Lanes::load(squared_deltas + k);
    const Lanes inverse = 1.0 / ((offset - base) + x);
    values += (squared_delta * inverse - 1.0) * inverse;
    changes += (1.0 - 2.0 * squared_delta * inverse) * inverse * inverse;
  }
  // No tail: count is a whole number of blocks.
  return {joined<W>(values), joined<W>(changes)};
}

struct OffsetSlopeKernel {
  template <std::size_t W>
  [[gnu::always_inline]] static OffsetSlope run(const double* offsets, const double* squared_deltas,
                                                std::size_t count, double base, double x) {
    return slope_sums<W>(offsets, squared_deltas, count, base, x);
  }
};

struct OffsetNewtonKernel {
  template <std::size_t W>
  [[gnu::always_inline]] static OffsetNewton run(const double* offsets,
                                                 const double* squared_deltas, std::size_t count,
                                                 double base, OffsetNewtonTerms terms, double start,
                                                 double floor) {
    constexpr double kConverged = 0x1p-52;
    double lo = 0.0, hi = std::numeric_limits<double>::infinity(), x = start;
    for (int iteration = 0; iteration < 8; ++iteration) {
      const OffsetSlope sums = slope_sums<W>(offsets, squared_deltas, count, base, x);
      const double inverse_ref = 1.0 / (terms.reference_gap + x);
      const double value = (sums.value - terms.rate) + 2.0 * terms.reference_weight * inverse_ref;
      const double curvature =
          sums.change - 2.0 * terms.reference_weight * inverse_ref * inverse_ref;
      (value > 0 ? lo : hi) = x;
      const double next = x - value / curvature;
      if (!(curvature < 0.0)) break;
      if (std::fabs(next - x) <= kConverged * x) return {true, std::clamp(next, lo, hi)};
      if (!(next > lo && next < hi && next > floor)) break;
      x = next;
    }
    return {false, x};
  }
};

}  // namespace

void gather_offsets(const double* left_mean, const double* left_variance, const double* right_mean,
                    const double* right_variance, std::size_t d, double dt, double* offsets,
                    double* squared_deltas, OffsetSummary& summary) {
  detail::run_in_copy<GatherOffsetsKernel>(left_mean, left_variance, right_mean, right_variance, d,
                                           dt, offsets, squared_deltas, &summary);
}

OffsetSlope offset_slope(const double* offsets, const double* squared_deltas, std::size_t count,
                         double base, double x) {
  return detail::run_in_copy<OffsetSlopeKernel>(offsets, squared_deltas, count, base, x);
}

OffsetNewton offset_newton(const double* offsets, const double* squared_deltas, std::size_t count,
                           double base, const OffsetNewtonTerms& terms, double start,
                           double floor) {
  return detail::run_in_copy<OffsetNewtonKernel>(offsets, squared_deltas, count, base, terms, start,
                                                 floor);
}

OffsetSlope offset_slope_reference(const double* offsets, const double* squared_deltas,
                                   std::size_t count, double base, double x) {
  OffsetSlope sums{0.0, 0.0};
  for (std::size_t k = 0; k < count; ++k) {
    const double inverse = 1.0 / ((offsets[k] - base) + x);
    sums.value += (squared_deltas[k] * inverse - 1.0) * inverse;
    sums.change += (1.0 - 2.0 * squared_deltas[k] * inverse) * inverse * inverse;
  }
  return sums;
}

}  // namespace kingman::kernels
