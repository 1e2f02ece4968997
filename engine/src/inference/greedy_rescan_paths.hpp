#pragma once
// The rescanning greedy algorithms (Brownian and binary / multinomial) with a chosen path, for
// tests that compare the paths: `automatic` is greedy_rescan's (row bounds where they apply,
// row_duration_bounds.hpp); `every_pair` rescores every live pair at every step. Both give the same
// tree.
#include "kingman/model/discrete_data.hpp"
#include "kingman/model/whitened_data.hpp"
#include "kingman/options.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman::detail {

enum class RescanPath { automatic, every_pair };

MergeTree greedy_rescan(const WhitenedData& data, double leaf_variance, Algorithm algorithm,
                        RescanPath path);
MergeTree greedy_rescan(const DiscreteData& data, Algorithm algorithm, RescanPath path);

}  // namespace kingman::detail
