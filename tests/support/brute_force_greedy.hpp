#pragma once
// Test oracle: brute-force greedy agglomeration under the Brownian coalescent model
// (MODEL.md sections 3 and 4). Written from the formulas, sharing no code with the engine;
// O(n^3 d) because every live pair is rescored from scratch at every step.
//
// Model: Lambda = I on the given (already whitened) data, every leaf has variance v0 >= 0,
// no missing values. Ties are broken by the first pair in (left id, right id) order over live
// node ids.
#include <cstddef>
#include <vector>

#include "kingman/tree/merge_tree.hpp"

namespace kingman::oracle {

enum class Variant {
  rate1,        // lambda = 1 for the score, most recent proposed merge time wins
  minduration,  // smallest Teh delta* (unclamped) wins, merged at max(delta*, 0)
  maxprob,      // largest -lambda delta* + log Z(delta*) with delta* clamped at 0
  mgreedy,      // Henao's log-scale mode, smallest (unclamped) wins, merged at max(delta, 0)
};

struct GreedyReference {
  MergeTree tree;    // merges with left < right node ids, heights h = -t
  double log_joint;  // sum_k [-lambda_{m_k} delta_k + log Z_k] with the true lambda_m
};

// x_row_major: n rows of d values. Throws std::invalid_argument on bad sizes, non-finite
// data, v0 < 0, or a merge with zero variance (duplicate points under v0 = 0).
GreedyReference brute_force_greedy(const std::vector<double>& x_row_major, std::size_t n,
                                   std::size_t d, double v0, Variant variant);

}  // namespace kingman::oracle
