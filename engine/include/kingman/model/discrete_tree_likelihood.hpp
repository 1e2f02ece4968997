#pragma once
// Scoring a complete tree under the binary / multinomial model and the coalescent prior.
#include "kingman/model/discrete_data.hpp"
#include "kingman/model/tree_likelihood.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman {

// log p(x, pi) of a tree with merge heights (MODEL.md sections 2 and 7), replaying the
// messages. log_likelihood includes the base term sum over observed entries of log q_{d, x_id}.
// A merge of disagreeing leaves at height 0 has probability 0: log_likelihood is then -inf.
// Throws NumericalError if a term is NaN.
TreeDensity tree_density(const DiscreteData& data, const MergeTree& tree);

}  // namespace kingman
