#include "kingman/model/numeric_range.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kingman/error.hpp"

namespace kingman {

double largest_brownian_spread(std::size_t rows) {
  return 0x1p250 / static_cast<double>(std::max<std::size_t>(rows, 1));
}

namespace {

// Rounding leaves the means of clusters of equal entries up to this fraction of their magnitude
// apart: a column's spread counts as at least this much of its largest magnitude.
constexpr double kRoundingSpread = 0x1p-52;

// Two different doubles of magnitude at least m differ by at least m 2^-53 (half an ulp at m),
// and a value and zero, or values of opposite signs, by at least m; so a column whose nonzero
// entries are all at least this large needs no search for its closest pair.
constexpr double kNoCloseValuesFrom = kSmallestBrownianDifference * 0x1p53;

// The closest two different entries of column `col` (value, row), sorted; rows are 0-based.
struct ClosePair {
  double low, high;
  std::size_t low_row, high_row;
};

ClosePair closest_different_entries(const double* values, std::size_t rows, std::size_t cols,
                                    std::size_t col) {
  std::vector<std::pair<double, std::size_t>> entries;
  entries.reserve(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    const double v = values[i * cols + col];
    if (!std::isnan(v)) entries.emplace_back(v, i);
  }
  std::sort(entries.begin(), entries.end());
  ClosePair closest{0.0, std::numeric_limits<double>::infinity(), 0, 0};
  for (std::size_t k = 1; k < entries.size(); ++k) {
    const auto& [a, row_a] = entries[k - 1];
    const auto& [b, row_b] = entries[k];
    if (b != a && b - a < closest.high - closest.low) closest = {a, b, row_a, row_b};
  }
  return closest;
}

}  // namespace

void check_brownian_range(const double* values, std::size_t rows, std::size_t cols,
                          const std::string& source) {
  const double largest = largest_brownian_spread(rows);
  double squared_spreads = 0.0;  // sum over columns of (spread / largest)^2
  for (std::size_t col = 0; col < cols; ++col) {
    double low = std::numeric_limits<double>::infinity(), high = -low;
    double smallest_magnitude = std::numeric_limits<double>::infinity();  // of nonzero entries
    double largest_magnitude = 0.0;
    std::size_t low_row = 0, high_row = 0, largest_row = 0;
    for (std::size_t i = 0; i < rows; ++i) {
      const double v = values[i * cols + col];
      if (std::isnan(v)) continue;
      if (v < low) {
        low = v;
        low_row = i;
      }
      if (v > high) {
        high = v;
        high_row = i;
      }
      if (v != 0.0) smallest_magnitude = std::min(smallest_magnitude, std::fabs(v));
      if (std::fabs(v) > largest_magnitude) {
        largest_magnitude = std::fabs(v);
        largest_row = i;
      }
    }
    if (!(low <= high)) continue;  // no observed entry
    const double spread = high - low;
    if (!(spread <= largest)) {
      throw InputError(fmt::format(
          "{}: column {} spans {:g} (row {}) to {:g} (row {}); with {} rows kingman squares "
          "differences of at most {:.3g} without overflowing double precision: rescale the column",
          source, col + 1, low, low_row + 1, high, high_row + 1, rows, largest));
    }
    if (!(largest_magnitude * kRoundingSpread <= largest)) {
      throw InputError(fmt::format(
          "{}: column {} holds {:g} (row {}): at that magnitude rounding leaves cluster means "
          "~{:.3g} apart, and with {} rows kingman squares differences of at most {:.3g}: rescale "
          "the column",
          source, col + 1, values[largest_row * cols + col], largest_row + 1,
          largest_magnitude * kRoundingSpread, rows, largest));
    }
    const double effective = std::max(spread, largest_magnitude * kRoundingSpread);
    squared_spreads += (effective / largest) * (effective / largest);
    if (smallest_magnitude < kNoCloseValuesFrom) {
      const ClosePair pair = closest_different_entries(values, rows, cols, col);
      if (pair.high - pair.low < kSmallestBrownianDifference) {
        throw InputError(fmt::format(
            "{}: column {} has {:g} (row {}) and {:g} (row {}), which differ by {:.3g}: squared, "
            "that underflows double precision (differences below {:.3g} are not used): rescale "
            "the column",
            source, col + 1, pair.low, pair.low_row + 1, pair.high, pair.high_row + 1,
            pair.high - pair.low, kSmallestBrownianDifference));
      }
    }
  }
  if (!(squared_spreads <= 1.0)) {
    throw InputError(fmt::format(
        "{}: the columns' spreads together are too large: squared distances between rows would "
        "overflow double precision (with {} rows their squares must sum to at most {:.3g}): "
        "rescale the data",
        source, rows, largest * largest));
  }
}

void check_smc_scale(const double* values, std::size_t rows, std::size_t cols,
                     const std::string& source) {
  double squared_spreads = 0.0;  // bounds every squared distance between two rows
  for (std::size_t col = 0; col < cols; ++col) {
    double low = std::numeric_limits<double>::infinity(), high = -low, magnitude = 0.0;
    for (std::size_t i = 0; i < rows; ++i) {
      const double v = values[i * cols + col];
      if (std::isnan(v)) continue;
      low = std::min(low, v);
      high = std::max(high, v);
      magnitude = std::max(magnitude, std::fabs(v));
    }
    if (!(low <= high)) continue;
    const double spread = std::max(high - low, magnitude * kRoundingSpread);
    squared_spreads += spread * spread;
  }
  const double n = static_cast<double>(rows);
  const double scale = squared_spreads * 0.5 * n * (n - 1.0);
  if (!(scale <= kLargestSmcScale)) {
    throw InputError(fmt::format(
        "{}: the columns' spreads squared sum to {:.3g}, so with {} rows a squared distance times "
        "the coalescent rate reaches {:.3g}, beyond the {:.0e} up to which the SMC algorithms "
        "compute merge times to double precision: rescale the data, keep the learned covariance "
        "(the default), or use a greedy algorithm",
        source, squared_spreads, rows, scale, kLargestSmcScale));
  }
}

}  // namespace kingman
