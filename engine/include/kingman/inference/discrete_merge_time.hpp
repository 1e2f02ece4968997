#pragma once
// The optimal merge time of one pair under the binary / multinomial model (MODEL.md sections 4
// and 7). With total rate lambda and current time T the pair's joint density of a merge at
// time t is e^{-lambda (T - t)} Z_C(t); its maximizer over the feasible times
// t <= min(t_l, t_r) does not depend on T. There is no closed form.
#include "kingman/model/discrete_messages.hpp"

namespace kingman {

// argmax over t <= pair.latest_time() of rate * t + log Z_C(t): the unclamped optimum (the
// greedy algorithms clamp it to the current time). A pair sharing no observed column, or whose
// objective still rises at the boundary, gets pair.latest_time().
//
// One mutation rate for all shared columns: in x = e^{lambda (2t - t_l - t_r)} the slope is
// rate / 2 lambda - h(x) with h(x) = sum_d (1 / (1 - A_d x) - 1), A_d = 1 - S_d; each term is
// convex in x and h(0) = 0, so the slope changes sign at most once, from + to -: the objective
// is unimodal, and safeguarded Halley steps in x (held as x and 1 - x, so that optima close to
// the boundary keep their relative precision) find its maximum to machine precision (about 3
// evaluations of O(shared columns), with no exp or log per evaluation).
// Per-column rates: the objective can be bimodal (an agreeing column with a fast rate can make
// it rise again near the boundary). Bounds on the slope and its derivative, and an ordering of
// the columns' elasticities that implies a single sign change, prove unimodality piece by piece
// (discrete_merge_time_per_column.cpp; about 12 probes); the single root is then found by the
// same Newton iteration. Where the proof fails the slope is scanned on 64 depths and every
// local maximum compared.
double optimal_merge_time(const DiscretePair& pair, double rate);

}  // namespace kingman
