#pragma once
// The JSON result of DESIGN.md's CLI contract.
#include <optional>
#include <string>

#include "kingman/api.hpp"
#include "kingman/tree/scores.hpp"

namespace kingman {

std::string to_json_report(const FitResult& result, const std::optional<TreeScores>& scores);

}  // namespace kingman
