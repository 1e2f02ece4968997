#pragma once
// Resampling of particle weights: which ancestor each of the M new particles copies.
//
// Every scheme returns ancestor indices in nondecreasing order and gives particle i
// M W_i offspring in expectation (W normalized; the weights may be given unnormalized, they are
// divided by their sum). Each scheme is a deterministic function of the uniforms it is given;
// the RandomStream overloads draw exactly those uniforms from the stream, in order.
//
//   scheme        uniforms used        offspring count of particle i (M W_i = expected)
//   systematic    1                    floor(M W_i) or ceil(M W_i)
//   stratified    M                    differs from M W_i by less than 2
//   residual      M + 1                floor(M W_i) + Binomial-like: floor(M W_i) copies, then the
//                                      remaining R = M - sum floor(M W_j) by *multinomial*
//                                      resampling of the fractional parts (R sorted uniforms from
//                                      the first R + 1 exponential spacings), the classical
//                                      residual scheme (Liu & Chen 1998). (With a systematic
//                                      remainder it would equal systematic resampling exactly:
//                                      the floors cancel out of its count formula.)
//   multinomial   M + 1                Binomial(M, W_i): sorted uniforms from M + 1 exponential
//                                      spacings (-log u), so no sort is needed
//
// Particles of weight 0 never get offspring. Negative, NaN or infinite weights, an all-zero
// weight vector, or a wrong number of uniforms throw (std::domain_error / std::invalid_argument).
#include <cstddef>
#include <span>
#include <vector>

#include "kingman/kernels/rng.hpp"

namespace kingman::kernels {

enum class ResamplingScheme { systematic, stratified, residual, multinomial };

// Number of uniforms `scheme` consumes to produce `count` ancestors.
std::size_t resampling_uniform_count(ResamplingScheme scheme, std::size_t count) noexcept;

// The ancestors.size() = M ancestors, from caller-supplied uniforms in (0, 1).
void systematic_resample(std::span<const double> weights, double uniform,
                         std::span<std::size_t> ancestors);
void stratified_resample(std::span<const double> weights, std::span<const double> uniforms,
                         std::span<std::size_t> ancestors);
void residual_resample(std::span<const double> weights, std::span<const double> uniforms,
                       std::span<std::size_t> ancestors);
void multinomial_resample(std::span<const double> weights, std::span<const double> uniforms,
                          std::span<std::size_t> ancestors);

// Any scheme, with uniforms drawn from `stream` (resampling_uniform_count of them).
void resample(ResamplingScheme scheme, std::span<const double> weights, RandomStream& stream,
              std::span<std::size_t> ancestors);
std::vector<std::size_t> resample(ResamplingScheme scheme, std::span<const double> weights,
                                  std::size_t count, RandomStream& stream);

}  // namespace kingman::kernels
