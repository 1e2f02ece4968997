#pragma once
// The JSON result of DESIGN.md's CLI contract.
#include <optional>
#include <string>

#include "kingman/api.hpp"
#include "kingman/tree/scores.hpp"

namespace kingman {

// One JSON object on one line (no trailing newline), keys in this order:
//   algorithm, n, d, seed, threads, log_evidence, log_joint, best_particle,
//   particles [{log_weight, weight, merges [[a, b, height], ...]}, ...], ess, resampled_at,
//   covariance_diagonal, leaf_variance, scores {dendrogram_purity, subtree_score,
//   leave_one_out_accuracy} (or {} without scores), seconds.
// Doubles are written with round-trip precision. log_evidence is null when absent (greedy).
// A log value of -inf (log_evidence, log_joint, a log_weight) is legal and written as null:
// JSON has no infinities. Any other non-finite number (NaN anywhere, +inf anywhere, -inf in a
// non-log field) throws NumericalError naming the field. best_particle is null when there are
// no particles; an out-of-range best index throws Error.
std::string to_json_report(const FitResult& result, const std::optional<TreeScores>& scores);

}  // namespace kingman
