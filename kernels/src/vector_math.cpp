#include "kingman/kernels/vector_math.hpp"

#include <cmath>

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

}  // namespace kingman::kernels
