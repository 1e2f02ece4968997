#include "kingman/kernels/vector_math.hpp"

#include <cmath>
#include <limits>

#include "vector_clones.hpp"
#include "vector_math_detail.hpp"

namespace kingman::kernels {

KINGMAN_VECTOR_CLONES
void log_array(const double* x, double* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) out[i] = detail::log_of_normal(x[i]);
}

KINGMAN_VECTOR_CLONES
void exp_array(const double* x, double* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) out[i] = detail::exp_or_zero(x[i]);
}

KINGMAN_VECTOR_CLONES
void sqrt_array(const double* x, double* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) out[i] = std::sqrt(x[i]);
}

KINGMAN_VECTOR_CLONES
double max_array(const double* x, std::size_t count) {
  // Four running maxima (independent chains, SIMD lanes), joined at the end. The maximum does
  // not depend on the order, so every split gives the same value.
  constexpr std::size_t kLanes = 4;
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  double lane[kLanes] = {kNone, kNone, kNone, kNone};
  std::size_t i = 0;
  for (; i + kLanes <= count; i += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l) lane[l] = x[i + l] > lane[l] ? x[i + l] : lane[l];
  for (; i < count; ++i) lane[0] = x[i] > lane[0] ? x[i] : lane[0];
  const double low = lane[0] > lane[1] ? lane[0] : lane[1];
  const double high = lane[2] > lane[3] ? lane[2] : lane[3];
  return low > high ? low : high;
}

KINGMAN_VECTOR_CLONES
void weighted_sum(double wa, const double* a, double wb, const double* b, double* out,
                  std::size_t count) {
  // Restrict-qualified so that the loop vectorizes without overlap checks.
  const double* __restrict from_a = a;
  const double* __restrict from_b = b;
  double* __restrict to = out;
  for (std::size_t i = 0; i < count; ++i) to[i] = wa * from_a[i] + wb * from_b[i];
}

}  // namespace kingman::kernels
