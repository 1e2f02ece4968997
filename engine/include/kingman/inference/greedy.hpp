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

// Greedy-MinDuration, Greedy-MaxProb and MGreedy: every live pair is scored at every step with
// the true rate lambda_m; selection uses the unclamped duration (or, for MaxProb, the objective
// at the feasible duration) and the merge happens at the clamped duration. Ties go to the first
// pair in (slot, slot) order. On complete data MinDuration and MGreedy rescore only the rows
// that bounds from earlier steps cannot rule out, and MaxProb scores exactly only the pairs that
// SIMD bounds cannot rule out: the same tree as rescoring every pair (O(n^3)), for MinDuration
// and MGreedy in about O(n^2) time.
MergeTree greedy_rescan(const WhitenedData& data, double leaf_variance, Algorithm algorithm);

// Whether Greedy-Rate1's bounded path is expected to be faster than its full pair cache on n
// points of d dimensions with `threads` threads. The full cache's merges read and write rows of
// an n^2/2 array, memory-bound work that extra threads speed up little and that does not grow
// with d; the bounded path recomputes what it does not keep, arithmetic that grows with d and
// scales with the threads. So at d <= kBoundedReferenceDims it is preferred from the points of
// the last tier of kBoundedPathTiers whose thread count `threads` reaches, and at larger d from
// those counts times d / kBoundedReferenceDims. The tiers lie where the bounded path was no
// slower in every measurement (bench/RESULTS.md): 1 to 3 threads on both 2-vCPU hosts and the
// 16-core machine (Engine: greedy, twenty-fourth session), where on one host it was slower by
// at most 8 % while needing a small fraction of the memory; 4 and more threads on the 16-core
// machine (Sixteen cores, twenty-sixth session), where on 4 threads it was no slower from
// 7 000 points at d = 20 and 10 000 at d = 40, and on 8 and 16 threads from 5 000 at d = 20.
inline constexpr std::size_t kBoundedReferenceDims = 20;
struct BoundedPathTier {
  std::size_t from_threads;
  std::size_t from_points;
};
inline constexpr BoundedPathTier kBoundedPathTiers[] = {
    {1, 40000}, {2, 30000}, {4, 10000}, {8, 7000}};
bool greedy_rate1_prefers_bounded(std::size_t n, std::size_t d, std::size_t threads);

// The storage run_greedy gives Brownian Greedy-Rate1 on n points of d dimensions with `threads`
// threads within `memory_budget` bytes: `requested` unless it is automatic, else bounded where
// greedy_rate1_prefers_bounded says so or the full cache does not fit, full otherwise. Throws
// ResourceError, saying what each storage needs, when the chosen one does not fit. `cores`, where
// fewer than `threads` (a run that asks for more threads than the machine has), is what the
// speed rule counts: the threads beyond them only take turns (0: as many as the threads).
PairStorage greedy_rate1_storage(std::size_t n, std::size_t d, std::size_t threads,
                                 std::size_t memory_budget, PairStorage requested,
                                 std::size_t cores = 0);

// Throws OptionError where `storage` cannot serve the greedy `algorithm`: a bounded path for
// Greedy-MaxProb, which rescores and keeps every live pair. (MinDuration and MGreedy keep no pair
// cache on complete data; run_greedy refuses `bounded` for them on other data.)
void check_pair_storage(Algorithm algorithm, PairStorage storage);

// Dispatches on a greedy algorithm; throws OptionError for a non-greedy one. Greedy-Rate1 keeps
// its pair scores as greedy_rate1_storage chooses (reported in `used` when given); the
// rescanning variants need the full pair cache (OptionError for `bounded`) and throw
// ResourceError (saying what would fit) when it does not fit `memory_budget` bytes.
MergeTree run_greedy(const WhitenedData& data, double leaf_variance, Algorithm algorithm,
                     std::size_t memory_budget = default_memory_budget(),
                     PairStorage storage = PairStorage::automatic, PairStorage* used = nullptr);

}  // namespace kingman
