#pragma once
// Scoring a complete tree under the Brownian model and the coalescent prior.
#include <vector>

#include "kingman/model/whitened_data.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman {

struct TreeDensity {
  double log_prior = 0.0;       // sum_k -lambda_{m_k} delta_k
  double log_likelihood = 0.0;  // sum_k log Z_k
  double log_joint() const { return log_prior + log_likelihood; }
};

// log p(x, pi) of a tree with merge heights (MODEL.md sections 2-3), replaying the messages.
// Throws NumericalError if a term is NaN or +inf (e.g. identical points merged at height 0
// with zero leaf variance).
TreeDensity tree_density(const WhitenedData& data, double leaf_variance, const MergeTree& tree);

}  // namespace kingman
