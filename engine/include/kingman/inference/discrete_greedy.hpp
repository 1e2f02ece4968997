#pragma once
// The greedy family for the binary / multinomial likelihood (MODEL.md sections 4 and 7), with
// the Brownian greedy's selection and clamping semantics: a pair's optimum is taken over its
// feasible times t <= min(t_l, t_r) (discrete_merge_time.hpp), selection uses that unclamped
// optimum, and the merge happens at the optimum clamped to the current time.
#include "kingman/model/discrete_data.hpp"
#include "kingman/options.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman {

// Greedy-Rate1: every pair is scored once, when it is created, by its unclamped optimal merge
// height under rate 1 (independent of the current time); the most recent pair merges, at its
// height clamped to the current height. O(n^2) pair scores, n(n-1)/2 doubles of storage.
MergeTree greedy_rate1(const DiscreteData& data);

// Greedy-MinDuration (smallest unclamped optimal duration) and Greedy-MaxProb (largest
// e^{-lambda_m delta} Z_C(delta) at the clamped duration): every live pair is rescored at every
// step with the true rate lambda_m, O(n^3) pair scores. Ties go to the first pair in
// (slot, slot) order. Throws OptionError for another algorithm.
MergeTree greedy_rescan(const DiscreteData& data, Algorithm algorithm);

// Dispatches on a greedy algorithm; mgreedy (a Brownian log-scale GIG mode) and non-greedy
// algorithms throw OptionError.
MergeTree run_greedy(const DiscreteData& data, Algorithm algorithm);

}  // namespace kingman
