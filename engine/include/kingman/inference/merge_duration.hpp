#pragma once
// Optimal merge durations for one pair (MODEL.md section 4). For a pair with squared distance
// eps, duration offset r (section 3.2) and total rate lambda, the pair's joint density in the
// duration delta is g(delta) = exp(-lambda delta) N(eps; 0, s) with s = r + 2 delta.
#include <cmath>
#include <cstddef>
#include <vector>

#include "kingman/kernels/mode_durations.hpp"
#include "kingman/kernels/offset_sums.hpp"
#include "kingman/model/brownian_messages.hpp"

namespace kingman {

// Teh et al.'s delta*: the mode of g in linear scale, unclamped (may be negative):
// s* = (sqrt(d^2 + 4 lambda eps) - d) / (2 lambda), delta* = (s* - r) / 2.
// Inline: Greedy-Rate1 evaluates it for every pair it creates. The formula is the kernels' one
// (kernels::mode_durations takes a row of pairs with the same bits).
inline double linear_mode_duration(double lambda, double dims, double eps, double offset) {
  return kernels::linear_mode_duration(lambda, dims, eps, offset);
}

// Henao & Lucas's MGreedy duration: the mode in log scale of s,
// s* = (l + sqrt(l^2 + lambda eps)) / lambda with l = 1 - d/2, delta* = (s* - r) / 2.
inline double log_mode_duration(double lambda, double dims, double eps, double offset) {
  return kernels::log_mode_duration(lambda, dims, eps, offset);
}

// The same modes when dimensions carry their own offsets r_j (missing entries). No closed form
// unless the offsets are equal: the stationary point of log g (plus log s_ref for the log-scale
// mode, with s_ref = mean r_j + 2 delta) is bracketed, then found by Newton steps kept inside
// the bracket (bisection in log s_min where a step would leave it). Returns -inf when the pair
// shares no observed dimension (the likelihood is flat and the prior favours merging at once).
double linear_mode_duration(double lambda, const SharedDimensions& shared);
double log_mode_duration(double lambda, const SharedDimensions& shared);

// A pair's shared dimensions as the mode search reads them: offsets and squared differences in
// whole SIMD blocks (kernels::kOffsetBlock), where entries that are not a shared dimension (the
// padding, and from gather_mode_search_input(views) the dimensions one cluster lacks) hold
// (+inf, 0), whose terms are exact zeros; and the summaries the closed form needs. Greedy-Rate1
// gathers every pair of data with missing entries this way (kernels::gather_offsets).
struct ModeSearchInput {
  std::vector<double> offset, squared_delta;  // r_j and Delta_j^2 (at least `entries` long)
  std::size_t entries = 0;                    // the entries the search reads: whole blocks
  kernels::OffsetSummary summary{};           // of the dimensions both observe
};
// The dimensions both views observe at current_time <= both times (as shared_dimensions), each
// in its own place j; the summaries' sums in the kernel's eight interleaved partial sums. The
// views' rows must be padded as kernels::gather_offsets reads them (BrownianMessages' are).
void gather_mode_search_input(BrownianClusterView l, BrownianClusterView r, std::size_t d,
                              double current_time, ModeSearchInput& out);
// The same from SharedDimensions, its dimensions in its order and its sums in index order.
void gather_mode_search_input(const SharedDimensions& shared, ModeSearchInput& out);
// The modes above (from SharedDimensions: the same bits).
double linear_mode_duration(double lambda, const ModeSearchInput& input);
double log_mode_duration(double lambda, const ModeSearchInput& input);

}  // namespace kingman
