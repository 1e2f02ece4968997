#pragma once
// Particle weights: from log weights to normalized weights, the evidence increment, and the
// effective sample size.
#include <span>

namespace kingman::kernels {

// Writes weights[i] = exp(log_weights[i] - L) with L = log sum_i exp(log_weights[i]), and
// returns L (the log of the unnormalized total: the SMC evidence increment when the inputs are
// log(W_{k-1}) + log(alpha_k)). Sizes must match (std::invalid_argument otherwise).
// A log weight of -inf is legal (weight 0). If all are -inf (or the span is empty), returns
// -inf and writes zeros. NaN or +inf in any log weight throws std::domain_error naming the
// index: a NaN weight is a bug upstream and must not be averaged away.
double normalize_log_weights(std::span<const double> log_weights, std::span<double> weights);

// Effective sample size (sum W)^2 / sum W^2, which is 1 / sum W^2 for normalized weights.
// 0 when all weights are zero. Negative or non-finite weights throw std::domain_error.
double effective_sample_size(std::span<const double> weights);

// The same ESS computed straight from log weights (no normalization needed, no allocation):
// exp(2 LSE(l) - LSE(2 l)). Same error conventions as normalize_log_weights.
double effective_sample_size_from_log_weights(std::span<const double> log_weights);

}  // namespace kingman::kernels
