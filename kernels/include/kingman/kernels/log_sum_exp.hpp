#pragma once
// log(sum_i exp(x_i)) without overflow or underflow, for weights kept in log space.
#include <limits>
#include <span>

namespace kingman::kernels {

// log sum_i exp(values[i]). Empty input or all -inf gives -inf; any +inf gives +inf; NaN only
// when some input is NaN. Shifts by the maximum, so the largest term is exp(0) = 1 and the sum
// is in [1, size]: relative error ~ size * eps.
double log_sum_exp(std::span<const double> values) noexcept;

// log(exp(a) + exp(b)) with the same conventions.
double log_add_exp(double a, double b) noexcept;

// log sum exp over a stream of values in one pass, for values that are produced one at a time
// (e.g. per-pair scores). Keeps a running maximum and a sum of exp(x - maximum), rescaling the
// sum whenever the maximum grows. The result equals log_sum_exp over the same values up to
// rounding.
class LogSumExpAccumulator {
 public:
  void add(double value) noexcept;
  // The log of the sum so far (-inf when empty).
  double value() const noexcept;
  void reset() noexcept { *this = LogSumExpAccumulator{}; }

 private:
  double maximum_ = -std::numeric_limits<double>::infinity();
  double scaled_sum_ = 0.0;  // sum of exp(x - maximum_)
  bool has_nan_ = false;
};

}  // namespace kingman::kernels
