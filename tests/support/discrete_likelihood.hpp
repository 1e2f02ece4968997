#pragma once
// Test oracle: the binary / multinomial likelihood of Teh, Daume and Roy (section 4.3) computed
// by Felsenstein pruning, independently of the engine's normalized messages (MODEL.md
// section 7). Every column evolves on its own down the tree with the transition matrix
// P(s) = e^{-lambda s} I + (1 - e^{-lambda s}) 1 q^T over a branch of length s, and every root
// of the forest is drawn from the equilibrium q (the stationary root), so
// p(x | tree, times) = prod_columns sum_k q_k m_root(k), where m_c(k) is the probability of the
// leaves below c given state k at c. Unnormalized messages carry a log scale per node.
#include <cstddef>
#include <vector>

#include "exact_enumeration.hpp"

namespace kingman::oracle {

struct DiscreteModel {
  std::size_t n = 0;                // points
  std::size_t d = 0;                // columns
  std::size_t categories = 2;       // K
  std::vector<int> values;          // row-major n*d in 0..K-1; -1 = missing
  std::vector<double> equilibrium;  // row-major d*K, rows sum to 1
  std::vector<double> rates;        // lambda_d, one per column
};

// log p(x | history, merge_times) by pruning; histories with fewer than n - 1 merges give the
// product over the forest's roots. Throws std::invalid_argument on bad sizes or values.
LogLikelihood discrete_log_likelihood(DiscreteModel model);

// enumerate_exact with discrete_log_likelihood.
Enumeration enumerate_discrete(const DiscreteModel& model, const EnumerationOptions& options = {});

}  // namespace kingman::oracle
