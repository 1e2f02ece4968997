#include "kingman/kernels/log_sum_exp.hpp"

#include <cmath>
#include <limits>

namespace kingman::kernels {

double log_sum_exp(std::span<const double> values) noexcept {
  double maximum = -std::numeric_limits<double>::infinity();
  for (const double x : values) {
    if (std::isnan(x)) return x;
    if (x > maximum) maximum = x;
  }
  // All -inf (or empty): the sum is 0. +inf: the sum is +inf (and x - maximum would be NaN).
  if (!std::isfinite(maximum)) return maximum;
  double sum = 0.0;
  for (const double x : values) sum += std::exp(x - maximum);
  return maximum + std::log(sum);
}

double log_add_exp(double a, double b) noexcept {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  const double maximum = a > b ? a : b;
  if (!std::isfinite(maximum)) return maximum;
  const double minimum = a > b ? b : a;
  return maximum + std::log1p(std::exp(minimum - maximum));
}

void LogSumExpAccumulator::add(double value) noexcept {
  if (std::isnan(value)) {
    has_nan_ = true;
    return;
  }
  if (value <= maximum_) {
    if (std::isfinite(maximum_)) scaled_sum_ += std::exp(value - maximum_);
    return;
  }
  // A new maximum: rescale what we have (exp(-inf) = 0 covers the empty and all -inf cases).
  if (std::isinf(value)) {  // +inf dominates everything that follows
    maximum_ = value;
    scaled_sum_ = 1.0;
    return;
  }
  scaled_sum_ = scaled_sum_ * std::exp(maximum_ - value) + 1.0;
  maximum_ = value;
}

double LogSumExpAccumulator::value() const noexcept {
  if (has_nan_) return std::numeric_limits<double>::quiet_NaN();
  if (!std::isfinite(maximum_)) return maximum_;
  return maximum_ + std::log(scaled_sum_);
}

}  // namespace kingman::kernels
