#pragma once
// Rows that repeat exactly (MODEL.md section 3.3): with leaf variance 0 two identical points
// make the model's density infinite; and with missing entries, rows that agree wherever both
// are observed.
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

// With missing entries: the first pair of rows (0-based, i < j in lexicographic order) that
// observe at least one column in common and agree on every column they both observe. With leaf
// variance 0 such a pair's merge density is infinite at height 0 (MODEL.md section 3.4: the
// dimensions one of them lacks contribute nothing). O(rows^2) pair checks, most ending at the
// first shared column.
std::optional<std::pair<std::size_t, std::size_t>> find_rows_agreeing_where_both_observed(
    const double* values, std::size_t rows, std::size_t cols);

}  // namespace kingman
