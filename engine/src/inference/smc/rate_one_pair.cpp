// RateOnePair's batch of kill factors (rate_one_pair.hpp), in a file of its own so that it
// can be compiled with the options under which GCC vectorizes its loops (engine/CMakeLists.txt).
#include "rate_one_pair.hpp"

#include <limits>
#include <vector>

#include "kingman/kernels/vector_math.hpp"

namespace kingman::detail::race {

void RateOnePair::log_kill_factors(const double* eps, const double* offset,
                                   const double* offset_now, const double* delta, std::size_t count,
                                   double* out) const {
  thread_local std::vector<double> mode_buffer, log_buffer, spread_buffer, certain_buffer;
  mode_buffer.resize(count);
  log_buffer.resize(count);
  spread_buffer.resize(count);
  certain_buffer.resize(count);
  double* const mode = mode_buffer.data();
  double* const logs = log_buffer.data();
  double* const spread = spread_buffer.data();
  double* const certain = certain_buffer.data();
  // Branch-free passes that GCC vectorizes (square roots by sqrt_array: std::sqrt's errno
  // handling keeps loops scalar), each with mode()'s and survival_bound's operations in their
  // order: the modes, the ratios s / mode (1 where log_array cannot take them: left to the
  // exact test) and their logs, the spreads, then the bounds.
  const double shape = shape_;
  for (std::size_t k = 0; k < count; ++k) mode[k] = shape * shape + eps[k];
  kernels::sqrt_array(mode, mode, count);  // the roots
  for (std::size_t k = 0; k < count; ++k) {
    const double root = mode[k];
    const double above = shape + root, below = eps[k] / (root - shape);
    mode[k] = shape >= 0.0 ? above : below;
    const double r = offset_now[k] / mode[k];
    logs[k] = r >= std::numeric_limits<double>::min() && r < kInf ? r : 1.0;
    spread[k] = 0.5 * (eps[k] / mode[k] + mode[k]);
  }
  kernels::log_array(logs, logs, count);
  kernels::sqrt_array(spread, spread, count);
  const double margin = 1e-9 * (1.0 + std::fabs(shape));
  for (std::size_t k = 0; k < count; ++k) {
    const double e = eps[k], s = offset_now[k], m = mode[k];
    const double slope = shape + 0.5 * (e / s - s);
    const double r = s / m;
    const double h = std::min(1.0, 1.0 / spread[k]);
    const double log_ratio =
        shape * (logs[k] - h) - 0.5 * (e / s + s) + 0.5 * (e / m + m * (1.0 + h + h * h));
    const double scale = slope * h;
    const bool bounded = (s < m) & (slope > 0.0) & (r >= std::numeric_limits<double>::min());
    certain[k] =
        bounded & (scale >= 1e-6) & (log_ratio < kLogNegligible - 14.0 - margin) ? 1.0 : 0.0;
  }
  for (std::size_t k = 0; k < count; ++k) {
    if (!(offset_now[k] > offset[k])) {
      out[k] = 0.0;  // killed when created: S_C = 1
    } else if (certain[k] != 0.0) {
      out[k] = -delta[k];
    } else {
      out[k] = log_kill_factor(eps[k], offset[k], offset_now[k], delta[k]);
    }
  }
}

}  // namespace kingman::detail::race
