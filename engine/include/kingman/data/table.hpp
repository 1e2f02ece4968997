#pragma once
// A numeric data table as read from a file: n rows (points) by d columns (dimensions).
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace kingman {

struct Table {
  std::size_t rows = 0;                   // number of data points n
  std::size_t cols = 0;                   // number of dimensions d
  std::vector<double> values;             // row-major rows*cols; NaN marks a missing entry
  std::vector<std::string> row_names;     // from the id column, else empty
  std::vector<std::string> column_names;  // from the header, else empty
  std::string source;                     // file name, for error messages

  double at(std::size_t row, std::size_t col) const { return values[row * cols + col]; }
  bool missing(std::size_t row, std::size_t col) const { return std::isnan(at(row, col)); }
  bool has_missing() const;
};

}  // namespace kingman
