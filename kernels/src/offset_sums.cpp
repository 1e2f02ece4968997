#include "kingman/kernels/offset_sums.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "lane_sums.hpp"
#include "vector_clones.hpp"

namespace kingman::kernels {

static_assert(kOffsetBlock == kLanes);

namespace {

// The lanes' minimum and maximum, joined in a fixed order (min and max of doubles that are not
// NaN are exact: any order gives the same value).
[[gnu::always_inline]] inline double least_lane(const Block& lanes) {
  double least = lanes[0];
  for (std::size_t l = 1; l < kLanes; ++l) least = lanes[l] < least ? lanes[l] : least;
  return least;
}
[[gnu::always_inline]] inline double greatest_lane(const Block& lanes) {
  double greatest = lanes[0];
  for (std::size_t l = 1; l < kLanes; ++l) greatest = lanes[l] > greatest ? lanes[l] : greatest;
  return greatest;
}

}  // namespace

KINGMAN_VECTOR_CLONES
void gather_offsets(const double* left_mean, const double* left_variance, const double* right_mean,
                    const double* right_variance, std::size_t d, double dt, double* offsets,
                    double* squared_deltas, OffsetSummary& summary) {
  const Block infinite = Block{} + std::numeric_limits<double>::infinity(), zero = {};
  const Block one = Block{} + 1.0;
  Block counts = {}, least = infinite, greatest = -infinite, sums = {}, distances = {};
  const std::size_t padded = padded_size(d);
  for (std::size_t k = 0; k < padded; k += kLanes) {
    Block lm, lv, rm, rv;
    std::memcpy(&lm, left_mean + k, sizeof lm);
    std::memcpy(&lv, left_variance + k, sizeof lv);
    std::memcpy(&rm, right_mean + k, sizeof rm);
    std::memcpy(&rv, right_variance + k, sizeof rv);
    // Selects only (&& of masks became scalar compares and jumps).
    const Block variances = lv + rv;
    const auto both = variances < infinite;
    const Block difference = lm - rm;
    const Block offset = both ? variances + dt : infinite;
    const Block squared = both ? difference * difference : zero;
    std::memcpy(offsets + k, &offset, sizeof offset);
    std::memcpy(squared_deltas + k, &squared, sizeof squared);
    counts += both ? one : zero;
    least = offset < least ? offset : least;  // unshared lanes hold +inf
    const Block shared_offset = both ? offset : -infinite;
    greatest = shared_offset > greatest ? shared_offset : greatest;
    sums += both ? offset : zero;
    distances += squared;
  }
  auto none = [](std::size_t) { return 0.0; };
  summary.count = static_cast<std::size_t>(finish_sum(counts, 0, 0, none));
  summary.least = least_lane(least);
  summary.greatest = greatest_lane(greatest);
  summary.sum = finish_sum(sums, 0, 0, none);
  summary.squared_distance = finish_sum(distances, 0, 0, none);
}

namespace {

// offset_slope's sums, inline in each SIMD copy that uses them.
[[gnu::always_inline]] inline OffsetSlope slope_sums(const double* offsets,
                                                     const double* squared_deltas,
                                                     std::size_t count, double base, double x) {
  Block values = {}, changes = {};
  for (std::size_t k = 0; k < count; k += kLanes) {
    Block offset, squared_delta;
    std::memcpy(&offset, offsets + k, sizeof offset);
    std::memcpy(&squared_delta, squared_deltas + k, sizeof squared_delta);
    const Block inverse = 1.0 / ((offset - base) + x);
    values += (squared_delta * inverse - 1.0) * inverse;
    changes += (1.0 - 2.0 * squared_delta * inverse) * inverse * inverse;
  }
  auto none = [](std::size_t) { return 0.0; };  // no tail: count is a whole number of blocks
  return {finish_sum(values, 0, 0, none), finish_sum(changes, 0, 0, none)};
}

}  // namespace

KINGMAN_VECTOR_CLONES
OffsetSlope offset_slope(const double* offsets, const double* squared_deltas, std::size_t count,
                         double base, double x) {
  return slope_sums(offsets, squared_deltas, count, base, x);
}

KINGMAN_VECTOR_CLONES
OffsetNewton offset_newton(const double* offsets, const double* squared_deltas, std::size_t count,
                           double base, const OffsetNewtonTerms& terms, double start,
                           double floor) {
  constexpr double kConverged = 0x1p-52;
  double lo = 0.0, hi = std::numeric_limits<double>::infinity(), x = start;
  for (int iteration = 0; iteration < 8; ++iteration) {
    const OffsetSlope sums = slope_sums(offsets, squared_deltas, count, base, x);
    const double inverse_ref = 1.0 / (terms.reference_gap + x);
    const double value = (sums.value - terms.rate) + 2.0 * terms.reference_weight * inverse_ref;
    const double curvature = sums.change - 2.0 * terms.reference_weight * inverse_ref * inverse_ref;
    (value > 0 ? lo : hi) = x;
    const double next = x - value / curvature;
    if (!(curvature < 0.0)) break;
    if (std::fabs(next - x) <= kConverged * x) return {true, std::clamp(next, lo, hi)};
    if (!(next > lo && next < hi && next > floor)) break;
    x = next;
  }
  return {false, x};
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
