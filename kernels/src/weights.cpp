#include "kingman/kernels/weights.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "number_text.hpp"

namespace kingman::kernels {
namespace {

// The maximum of the log weights, after checking that none is NaN or +inf.
double checked_maximum(std::span<const double> log_weights, const char* caller) {
  double maximum = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < log_weights.size(); ++i) {
    const double x = log_weights[i];
    if (std::isnan(x) || x == std::numeric_limits<double>::infinity()) {
      throw std::domain_error(std::string(caller) + ": log weight " + std::to_string(i) + " is " +
                              (std::isnan(x) ? "NaN" : "+inf"));
    }
    if (x > maximum) maximum = x;
  }
  return maximum;
}

}  // namespace

double normalize_log_weights(std::span<const double> log_weights, std::span<double> weights) {
  if (log_weights.size() != weights.size()) {
    throw std::invalid_argument("normalize_log_weights: " + std::to_string(log_weights.size()) +
                                " log weights but " + std::to_string(weights.size()) +
                                " output slots");
  }
  const double maximum = checked_maximum(log_weights, "normalize_log_weights");
  if (maximum == -std::numeric_limits<double>::infinity()) {
    for (double& w : weights) w = 0.0;
    return maximum;
  }
  double sum = 0.0;
  for (std::size_t i = 0; i < log_weights.size(); ++i) {
    weights[i] = std::exp(log_weights[i] - maximum);
    sum += weights[i];
  }
  const double inverse = 1.0 / sum;  // sum is in [1, n]
  for (double& w : weights) w *= inverse;
  return maximum + std::log(sum);
}

double effective_sample_size(std::span<const double> weights) {
  double maximum = 0.0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double w = weights[i];
    if (!(w >= 0.0) || !std::isfinite(w)) {
      throw std::domain_error("effective_sample_size: weight " + std::to_string(i) + " is " +
                              detail::number_text(w));
    }
    if (w > maximum) maximum = w;
  }
  if (maximum == 0.0) return 0.0;
  // Scaled by the largest weight, so unnormalized weights neither overflow nor underflow.
  double sum = 0.0;
  double sum_squares = 0.0;
  for (const double w : weights) {
    const double scaled = w / maximum;
    sum += scaled;
    sum_squares += scaled * scaled;
  }
  return sum * sum / sum_squares;
}

double effective_sample_size_from_log_weights(std::span<const double> log_weights) {
  const double maximum = checked_maximum(log_weights, "effective_sample_size_from_log_weights");
  if (maximum == -std::numeric_limits<double>::infinity()) return 0.0;
  double sum = 0.0;
  double sum_squares = 0.0;
  for (const double x : log_weights) {
    const double w = std::exp(x - maximum);
    sum += w;
    sum_squares += w * w;
  }
  return sum * sum / sum_squares;
}

}  // namespace kingman::kernels
