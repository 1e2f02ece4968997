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

// `pair_cache`: with row bounds, whether the distances are cached (n^2 / 2 of them) or computed
// as the rescored rows need them (O(n d) memory); the every-pair path always caches them.
MergeTree greedy_rescan(const WhitenedData& data, double leaf_variance, Algorithm algorithm,
                        RescanPath path, bool pair_cache = true);

// Whether the automatic path rescores rows by bounds on this data:
// MinDuration and MGreedy on complete data whose distances cannot overflow.
bool rescan_by_row_bounds(const WhitenedData& data, Algorithm algorithm);
MergeTree greedy_rescan(const DiscreteData& data, Algorithm algorithm, RescanPath path);

}  // namespace kingman::detail
