#include "kingman/data/duplicates.hpp"

#include <cmath>
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kingman {

namespace {

// Canonical bytes of a row: -0.0 folds to 0.0 and every NaN to one pattern, so equal values
// hash equally.
std::vector<double> canonical_row(const double* values, std::size_t cols, std::size_t i) {
  std::vector<double> row(cols);
  for (std::size_t j = 0; j < cols; ++j) {
    const double v = values[i * cols + j];
    row[j] = std::isnan(v) ? std::numeric_limits<double>::quiet_NaN() : (v == 0.0 ? 0.0 : v);
  }
  return row;
}

}  // namespace

std::optional<std::pair<std::size_t, std::size_t>> find_duplicate_rows(const double* values,
                                                                       std::size_t rows,
                                                                       std::size_t cols) {
  std::unordered_map<std::string, std::size_t> seen;
  seen.reserve(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    const std::vector<double> row = canonical_row(values, cols, i);
    std::string key(reinterpret_cast<const char*>(row.data()), row.size() * sizeof(double));
    const auto [it, inserted] = seen.emplace(std::move(key), i);
    if (!inserted) return std::make_pair(it->second, i);
  }
  return std::nullopt;
}

std::optional<std::pair<std::size_t, std::size_t>> find_duplicate_rows(const Table& data) {
  return find_duplicate_rows(data.values.data(), data.rows, data.cols);
}

std::optional<std::pair<std::size_t, std::size_t>> find_rows_agreeing_where_both_observed(
    const double* values, std::size_t rows, std::size_t cols) {
  for (std::size_t i = 0; i < rows; ++i) {
    const double* a = values + i * cols;
    for (std::size_t j = i + 1; j < rows; ++j) {
      const double* b = values + j * cols;
      bool shared = false, agree = true;
      for (std::size_t k = 0; k < cols && agree; ++k) {
        if (std::isnan(a[k]) || std::isnan(b[k])) continue;
        shared = true;
        agree = a[k] == b[k];
      }
      if (shared && agree) return std::make_pair(i, j);
    }
  }
  return std::nullopt;
}

}  // namespace kingman
