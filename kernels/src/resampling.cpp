#include "kingman/kernels/resampling.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "number_text.hpp"

namespace kingman::kernels {
namespace {

// Checks the weights and returns their sum and the index of the last positive one (the walk
// stops there, so rounding in the cumulative sum can never select a trailing zero weight).
struct WeightSummary {
  double total;
  std::size_t last_positive;
};

WeightSummary summarize(std::span<const double> weights, const char* caller) {
  double total = 0.0;
  std::size_t last_positive = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double w = weights[i];
    if (!(w >= 0.0) || !std::isfinite(w)) {
      throw std::domain_error(std::string(caller) + ": weight " + std::to_string(i) + " is " +
                              detail::number_text(w) + " (weights must be finite and >= 0)");
    }
    if (w > 0.0) last_positive = i;
    total += w;
  }
  if (!(total > 0.0)) {
    throw std::domain_error(std::string(caller) + ": all " + std::to_string(weights.size()) +
                            " weights are zero");
  }
  return {total, last_positive};
}

void check_uniform_count(std::size_t given, std::size_t needed, const char* caller) {
  if (given != needed) {
    throw std::invalid_argument(std::string(caller) + ": needs " + std::to_string(needed) +
                                " uniforms, got " + std::to_string(given));
  }
}

// Walks the cumulative weights against nondecreasing positions in [0, 1): ancestor k is the
// particle i with C_{i-1} <= position(k) * total < C_i.
template <typename Position>
void walk(std::span<const double> weights, const WeightSummary& summary, Position position,
          std::span<std::size_t> ancestors) {
  std::size_t i = 0;
  double cumulative = weights[0];
  for (std::size_t k = 0; k < ancestors.size(); ++k) {
    const double target = position(k) * summary.total;
    while (target >= cumulative && i < summary.last_positive) {
      ++i;
      cumulative += weights[i];
    }
    ancestors[k] = i;
  }
}

}  // namespace

std::size_t resampling_uniform_count(ResamplingScheme scheme, std::size_t count) noexcept {
  switch (scheme) {
    case ResamplingScheme::systematic:
      return 1;
    case ResamplingScheme::stratified:
      return count;
    case ResamplingScheme::residual:
    case ResamplingScheme::multinomial:
      return count + 1;
  }
  return 0;
}

void systematic_resample(std::span<const double> weights, double uniform,
                         std::span<std::size_t> ancestors) {
  const WeightSummary summary = summarize(weights, "systematic_resample");
  const double m = static_cast<double>(ancestors.size());
  walk(
      weights, summary, [&](std::size_t k) { return (static_cast<double>(k) + uniform) / m; },
      ancestors);
}

void stratified_resample(std::span<const double> weights, std::span<const double> uniforms,
                         std::span<std::size_t> ancestors) {
  const WeightSummary summary = summarize(weights, "stratified_resample");
  check_uniform_count(uniforms.size(), ancestors.size(), "stratified_resample");
  const double m = static_cast<double>(ancestors.size());
  walk(
      weights, summary, [&](std::size_t k) { return (static_cast<double>(k) + uniforms[k]) / m; },
      ancestors);
}

void multinomial_resample(std::span<const double> weights, std::span<const double> uniforms,
                          std::span<std::size_t> ancestors) {
  const WeightSummary summary = summarize(weights, "multinomial_resample");
  check_uniform_count(uniforms.size(), ancestors.size() + 1, "multinomial_resample");
  // With E_j = -log u_j i.i.d. exponential, (E_0 + ... + E_k) / (E_0 + ... + E_M), k < M, are
  // the order statistics of M i.i.d. uniforms: sorted positions in O(M), without a sort.
  double total_spacing = 0.0;
  for (const double u : uniforms) total_spacing += -std::log(u);
  double partial = 0.0;
  walk(
      weights, summary,
      [&](std::size_t k) {
        partial += -std::log(uniforms[k]);
        return partial / total_spacing;
      },
      ancestors);
}

void residual_resample(std::span<const double> weights, std::span<const double> uniforms,
                       std::span<std::size_t> ancestors) {
  const WeightSummary summary = summarize(weights, "residual_resample");
  const std::size_t m = ancestors.size();
  check_uniform_count(uniforms.size(), m + 1, "residual_resample");
  const double scale = static_cast<double>(m) / summary.total;
  // First pass: the deterministic copies floor(M W_i) and the sum of the fractional parts.
  std::size_t deterministic = 0;
  double residual_total = 0.0;
  for (const double w : weights) {
    const double expected = w * scale;
    const double copies = std::floor(expected);
    deterministic += static_cast<std::size_t>(copies);
    residual_total += expected - copies;
  }
  // Rounding can push the floors' sum past M only when M W_i sits a few ulps from an integer;
  // never emit more than M.
  const std::size_t remaining = deterministic < m ? m - deterministic : 0;
  // The R remaining positions: R sorted i.i.d. uniforms over the fractional parts, from R + 1
  // exponential spacings (as multinomial_resample; the first R + 1 of the M + 1 uniforms).
  double total_spacing = 0.0;
  for (std::size_t j = 0; j <= remaining; ++j) total_spacing += -std::log(uniforms[j]);
  double spacing = 0.0;
  std::size_t k = 0;
  auto position = [&] { return (spacing + -std::log(uniforms[k])) / total_spacing; };
  // Second pass: emit floor(M W_i) copies of i, then i once more for each remaining position
  // that falls in i's interval of the fractional parts.
  std::size_t out = 0;
  double cumulative = 0.0;
  std::size_t last_with_residual = summary.last_positive;
  for (std::size_t i = 0; i < weights.size() && out < m; ++i) {
    const double expected = weights[i] * scale;
    const double copies = std::floor(expected);
    for (std::size_t c = 0; c < static_cast<std::size_t>(copies) && out < m; ++c) {
      ancestors[out++] = i;
    }
    const double fraction = expected - copies;
    if (fraction <= 0.0) continue;
    last_with_residual = i;
    cumulative += fraction;
    while (k < remaining && out < m && position() * residual_total < cumulative) {
      spacing += -std::log(uniforms[k]);
      ancestors[out++] = i;
      ++k;
    }
  }
  // Positions left over by rounding at the very end of the cumulative sum go to the last
  // particle with a fractional part (which is where they fall).
  while (out < m) ancestors[out++] = last_with_residual;
}

void resample(ResamplingScheme scheme, std::span<const double> weights, RandomStream& stream,
              std::span<std::size_t> ancestors) {
  switch (scheme) {
    case ResamplingScheme::systematic:
      systematic_resample(weights, stream.uniform(), ancestors);
      return;
    case ResamplingScheme::residual:
    case ResamplingScheme::stratified:
    case ResamplingScheme::multinomial: {
      std::vector<double> uniforms(resampling_uniform_count(scheme, ancestors.size()));
      for (double& u : uniforms) u = stream.uniform();
      if (scheme == ResamplingScheme::stratified) {
        stratified_resample(weights, uniforms, ancestors);
      } else if (scheme == ResamplingScheme::residual) {
        residual_resample(weights, uniforms, ancestors);
      } else {
        multinomial_resample(weights, uniforms, ancestors);
      }
      return;
    }
  }
}

std::vector<std::size_t> resample(ResamplingScheme scheme, std::span<const double> weights,
                                  std::size_t count, RandomStream& stream) {
  std::vector<std::size_t> ancestors(count);
  resample(scheme, weights, stream, ancestors);
  return ancestors;
}

}  // namespace kingman::kernels
