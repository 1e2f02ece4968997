#pragma once
// The greedy family for the binary / multinomial likelihood (MODEL.md sections 4 and 7), with
// the Brownian greedy's selection and clamping semantics: a pair's optimum is taken over its
// feasible times t <= min(t_l, t_r) (discrete_merge_time.hpp), selection uses that unclamped
// optimum, and the merge happens at the optimum clamped to the current time.
#include <cstddef>

#include "kingman/memory_budget.hpp"
#include "kingman/model/discrete_data.hpp"
#include "kingman/options.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman {

// Greedy-Rate1: every pair is scored once, when it is created, by its unclamped optimal merge
// height under rate 1 (independent of the current time); the most recent pair merges, at its
// height clamped to the current height. O(n^2) pair scores, n(n-1)/2 doubles of storage.
MergeTree greedy_rate1(const DiscreteData& data);

// The same tree as greedy_rate1 in O(n d K + n k) memory (bounded_linkage.hpp): each cluster
// keeps its k best partners, rebuilt by a scan of its row when they have all merged. For n
// whose n(n-1)/2 pair scores do not fit in memory; each rebuild rescores a row, so where the
// full cache fits it is the faster one.
MergeTree greedy_rate1_bounded(const DiscreteData& data, std::size_t candidates_per_cluster = 32);

// The storage run_greedy gives Greedy-Rate1 on `data` with `threads` threads within
// `memory_budget` bytes: `requested` unless it is automatic, else the full cache where it fits
// and the bounded path where it does not. Throws ResourceError, saying what each storage
// needs, when the chosen one does not fit.
PairStorage greedy_rate1_storage(const DiscreteData& data, std::size_t threads,
                                 std::size_t memory_budget, PairStorage requested);

// Greedy-MinDuration (smallest unclamped optimal duration) and Greedy-MaxProb (largest
// e^{-lambda_m delta} Z_C(delta) at the clamped duration): every live pair is scored at every
// step with the true rate lambda_m, O(n^3) pair scores; with one mutation rate MinDuration
// rescores only the rows that bounds from earlier steps cannot rule out, the same tree in about
// O(n^2) pair scores. Ties go to the first pair in (slot, slot) order. Throws OptionError for
// another algorithm.
MergeTree greedy_rescan(const DiscreteData& data, Algorithm algorithm);

// Dispatches on a greedy algorithm; mgreedy (a Brownian log-scale GIG mode) and non-greedy
// algorithms throw OptionError. Greedy-Rate1 keeps its pair scores as greedy_rate1_storage
// chooses (reported in `used` when given); the rescanning variants keep no pair scores
// (OptionError for `bounded`, which only Greedy-Rate1 has) and throw ResourceError where even
// the messages do not fit `memory_budget` bytes.
MergeTree run_greedy(const DiscreteData& data, Algorithm algorithm,
                     std::size_t memory_budget = default_memory_budget(),
                     PairStorage storage = PairStorage::automatic, PairStorage* used = nullptr);

}  // namespace kingman
