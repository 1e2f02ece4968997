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
  // Branch-free passes that GCC vectorizes, through the scalar path's own mode(), spread() and
  // survival_bound(): the modes, spreads and ratios s / mode (1 where log_array cannot take
  // them: left to the exact test), the ratios' logs, then the bounds.
  const double shape = shape_;
  for (std::size_t k = 0; k < count; ++k) {
    mode[k] = RateOnePair::mode(shape, eps[k]);
    spread[k] = RateOnePair::spread(eps[k], mode[k]);
    const double r = offset_now[k] / mode[k];
    logs[k] = r >= std::numeric_limits<double>::min() && r < kInf ? r : 1.0;
  }
  kernels::log_array(logs, logs, count);
  // log_array's log is within a few ulps of std::log: far inside this margin on the bound.
  const double margin = 1e-9 * (1.0 + std::fabs(shape));
  for (std::size_t k = 0; k < count; ++k) {
    const double r = offset_now[k] / mode[k];
    const SurvivalBound bound =
        survival_bound(shape, eps[k], mode[k], offset_now[k], spread[k], logs[k]);
    const bool bounded = (bound.log_ratio < kInf) & (r >= std::numeric_limits<double>::min());
    certain[k] =
        (bounded & (bound.scale >= 1e-6) & (bound.log_ratio < kLogNegligible - 14.0 - margin))
            ? 1.0
            : 0.0;
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
