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
// The same for a row-major rows x cols array (NaN = missing), such as whitened data: rows that
// differ in the file can coincide there when a column's differences are below double precision
// at its centred scale.
std::optional<std::pair<std::size_t, std::size_t>> find_duplicate_rows(const double* values,
                                                                       std::size_t rows,
                                                                       std::size_t cols);

}  // namespace kingman
