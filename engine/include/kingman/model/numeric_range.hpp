#pragma once
// Whether data can be squared and summed in double precision, as the Brownian model needs:
// squared distances between rows and between their clusters' means, column variances, and the
// GIG arguments chi psi (a squared distance times a coalescent rate, up to n^2 / 2). Values
// spread so widely that these overflow, or differing by amounts so small that their squares
// vanish into zero or subnormals, made every algorithm fail far from the cause (Greedy-Rate1 kept
// rescanning a row whose merge height was NaN; the SMC algorithms stopped on an infinite GIG
// argument). This check names the column and the rows instead.
#include <cstddef>
#include <string>

namespace kingman {

// The smallest nonzero difference accepted between two entries of a column, 2^-500 (~3e-151):
// its square, 2^-1000, is a normal double with every digit.
inline constexpr double kSmallestBrownianDifference = 0x1p-500;

// The largest spread (largest minus smallest entry) accepted in a column of a table with
// `rows` rows: sqrt(DBL_MAX / 16) / rows, so that a squared distance times a coalescent rate
// stays 8 times below DBL_MAX. Together, the columns' squared spreads must stay below its square.
double largest_brownian_spread(std::size_t rows);

// Throws InputError naming `source`, the column (1-based) and the rows (1-based) at fault when a
// column's spread is above largest_brownian_spread(rows) (or the columns' together are), or when
// two entries of a column differ by less than kSmallestBrownianDifference without being equal.
// `values` is row-major, rows x cols; NaN entries are missing and skipped.
void check_brownian_range(const double* values, std::size_t rows, std::size_t cols,
                          const std::string& source);

}  // namespace kingman
