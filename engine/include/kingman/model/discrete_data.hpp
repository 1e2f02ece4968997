#pragma once
// A table encoded as categorical data for the binary / multinomial likelihood (MODEL.md
// section 7): every entry is one of K values 0..K-1 or missing, every column d has an
// equilibrium distribution q_d (all q_dk > 0) and a mutation rate lambda_d > 0.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kingman/data/table.hpp"
#include "kingman/options.hpp"

namespace kingman {

struct DiscreteData {
  static constexpr std::int32_t kMissing = -1;
  // Largest alphabet accepted: messages take n * d * K doubles.
  static constexpr std::size_t kMaxCategories = 1024;
  // Smallest equilibrium probability accepted: a leaf showing value k has the message 1/q_k, and
  // a merge multiplies two messages before dividing by Z, so 1/q_k^2 must stay a finite double
  // (q_k > 2^-511 ~ 1.5e-154); below 1e-150 products and ratios overflowed to NaN.
  static constexpr double kSmallestProbability = 1e-150;

  std::size_t n = 0;                  // points
  std::size_t d = 0;                  // columns
  std::size_t categories = 0;         // alphabet size K (2 for binary)
  std::vector<std::int32_t> values;   // row-major n*d values in 0..K-1, kMissing = missing
  std::vector<double> equilibrium;    // row-major d*K: q_dk > 0, each row sums to 1
  std::vector<double> mutation_rate;  // lambda_d > 0, one per column
  bool common_rate = true;            // every lambda_d is the same (the greedy optimum is exact)

  std::int32_t value(std::size_t row, std::size_t col) const { return values[row * d + col]; }
  const double* q(std::size_t col) const { return equilibrium.data() + col * categories; }

  // log of the product of q_{d, x_id} over observed entries: with messages normalized so that
  // q_d . M^d = 1, p(x | tree) = exp(log_base_term()) * prod_k Z_k (MODEL.md section 7).
  double log_base_term() const;
};

// Checks that every observed entry of the table lies in the alphabet and encodes it. binary:
// values 0 and 1; multinomial: integers 0..K-1 with K = options.categories, or, unset, the
// largest value + 1 (at least 2). Throws InputError naming the file, data row and column of a
// value outside the alphabet, OptionError for invalid options (naming the option).
DiscreteData encode_discrete(const Table& table, Likelihood likelihood,
                             const DiscreteOptions& options);

// q_d for every column (row-major d*K) as chosen by options.equilibrium:
// data: (count_dk + 1) / (observed_d + K), add-one (Laplace) smoothing, so no q_dk is 0 and a
// column with no observed entry gets the uniform distribution; uniform: 1/K; given: K
// probabilities for every column, or for K = 2 a single number Q = P(value 1), q = (1 - Q, Q).
// Given probabilities must lie in [kSmallestProbability, 1) and sum to 1 (within 1e-9; they are
// renormalized).
std::vector<double> choose_equilibrium(const std::vector<std::int32_t>& values, std::size_t n,
                                       std::size_t d, std::size_t categories,
                                       const Equilibrium& equilibrium);

// lambda_d for every column: empty -> 1, one value -> every column, d values -> per column.
// Each must be finite and > 0; throws OptionError naming --mutation-rate.
std::vector<double> choose_mutation_rates(const std::vector<double>& rates, std::size_t d);

}  // namespace kingman
