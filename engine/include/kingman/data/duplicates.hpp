#pragma once
// Rows that repeat exactly (MODEL.md section 3.3): with leaf variance 0 two identical points
// make the model's density infinite.
#include <cstddef>
#include <optional>
#include <utility>

#include "kingman/data/table.hpp"

namespace kingman {

// The first pair of identical rows (same values, same missing pattern), if any, as 0-based
// row indices in file order.
std::optional<std::pair<std::size_t, std::size_t>> find_duplicate_rows(const Table& data);

}  // namespace kingman
