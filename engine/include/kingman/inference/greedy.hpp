#pragma once
// The greedy family (MODEL.md section 4): one good tree, built one merge at a time.
#include <cstddef>
#include "kingman/model/whitened_data.hpp"

#include "kingman/memory_budget.hpp"
#include "kingman/options.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman {

// Greedy-Rate1: every pair is scored once, when it is created, by its unclamped merge height
// under rate 1 (independent of the current time); the most recent pair merges, at its height
// clamped to the current height. O(n^2 d) time, n(n-1)/2 doubles of pair storage.
MergeTree greedy_rate1(const WhitenedData& data, double leaf_variance);

// The same tree as greedy_rate1 in O(n d + n k) memory: each cluster keeps its k best
// partners (rebuilt by an O(n d) scan when they have all merged). For n whose n(n-1)/2 pair
// scores do not fit in memory.
MergeTree greedy_rate1_bounded(const WhitenedData& data, double leaf_variance,
                               std::size_t candidates_per_cluster = 32);

// Bytes the pair cache of Greedy-Rate1 and of the rescanning variants needs on n points of d
// dimensions, with the data and the per-cluster messages (run_greedy's test against the budget).
std::size_t greedy_pair_cache_bytes(std::size_t n, std::size_t d);

// Bytes greedy_rate1_bounded needs on n points with `threads` threads, beyond the data and its
// per-cluster messages: the candidate lists and one row's buffers per thread.
std::size_t greedy_rate1_bounded_bytes(std::size_t n, std::size_t threads,
                                       std::size_t candidates_per_cluster = 32);

// Greedy-MinDuration, Greedy-MaxProb and MGreedy: every live pair is rescored at every step
// with the true rate lambda_m (O(n^3)); selection uses the unclamped duration (or, for MaxProb,
// the objective at the feasible duration) and the merge happens at the clamped duration.
// Ties go to the first pair in (slot, slot) order.
MergeTree greedy_rescan(const WhitenedData& data, double leaf_variance, Algorithm algorithm);

// Dispatches on a greedy algorithm; throws OptionError for a non-greedy one. Greedy-Rate1 uses
// the full pair cache when n(n-1)/2 doubles fit in `memory_budget` bytes and the bounded path
// otherwise; the rescanning variants need the pair cache and throw ResourceError (saying what
// would fit) when it does not fit.
MergeTree run_greedy(const WhitenedData& data, double leaf_variance, Algorithm algorithm,
                     std::size_t memory_budget = default_memory_budget());

}  // namespace kingman
