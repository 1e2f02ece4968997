#pragma once
// The lexicographic numbering of the pairs (x < y) of m live positions: (0, 1), (0, 2), ...,
// (0, m - 1), (1, 2), ... Every proposal numbers its pairs so (a uniform pair for PriorPrior,
// a drawn index into pair scores for the others), so this is part of what makes a particle's
// draws a function of its stream alone.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

namespace kingman::detail {

// Live positions (x < y) of pair number `index` < m (m - 1) / 2, in O(1). (The law-proposal
// system walked the first positions one by one, O(m) per pair: inside its loops over every
// pair that was O(m^3) per step.)
inline std::pair<std::size_t, std::size_t> unrank_pair(std::size_t index, std::size_t m) {
  // Pairs whose first position is below x: before(x) = x (2m - 1 - x) / 2 (an integer: one of
  // x and 2m - 1 - x is even). x is the largest with before(x) <= index, near the smaller root
  // of before(x) = index; rounding is corrected by the two loops (a step or none).
  auto before = [m](std::size_t x) { return x * (2 * m - 1 - x) / 2; };
  const double b = 2.0 * static_cast<double>(m) - 1.0;
  const double root =
      0.5 * (b - std::sqrt(std::max(0.0, b * b - 8.0 * static_cast<double>(index))));
  std::size_t x = std::min(static_cast<std::size_t>(std::max(0.0, root)), m - 2);
  while (x > 0 && before(x) > index) --x;
  while (x + 2 < m && before(x + 1) <= index) ++x;
  return {x, x + 1 + (index - before(x))};
}

}  // namespace kingman::detail
