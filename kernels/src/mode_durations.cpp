#include "kingman/kernels/mode_durations.hpp"

#include "simd_copies.hpp"

namespace kingman::kernels {

namespace {

// Element-wise loops over the one-pair forms, which GCC vectorizes (square roots and divisions
// included: this file is compiled without errno and trapping math, kernels/CMakeLists.txt); the
// scale is tested once per row, not per pair.
struct ModeDurationsKernel {
  template <std::size_t>
  [[gnu::always_inline]] static void run(ModeScale scale, double lambda, double dims,
                                         const double* eps, const double* offset, double* out,
                                         std::size_t count) {
    if (scale == ModeScale::linear) {
      for (std::size_t k = 0; k < count; ++k)
        out[k] = linear_mode_duration(lambda, dims, eps[k], offset[k]);
    } else {
      for (std::size_t k = 0; k < count; ++k)
        out[k] = log_mode_duration(lambda, dims, eps[k], offset[k]);
    }
  }
};

}  // namespace

void mode_durations(ModeScale scale, double lambda, double dims, const double* eps,
                    const double* offset, double* out, std::size_t count) {
  detail::run_in_copy<ModeDurationsKernel>(scale, lambda, dims, eps, offset, out, count);
}

}  // namespace kingman::kernels
