#pragma once
// Index of the pair (i, j), i < j, in a condensed upper-triangular n x n matrix.
#include <cstddef>

namespace kingman::detail {

inline std::size_t condensed_index(std::size_t n, std::size_t i, std::size_t j) {
  return i * n - i * (i + 1) / 2 + (j - i - 1);
}

}  // namespace kingman::detail
