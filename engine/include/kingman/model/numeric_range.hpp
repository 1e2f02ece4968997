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
// `rows` rows: 2^250 / rows (~1.8e75 / rows), so that a squared distance stays below 2^500 /
// rows^2, and squared again, or times a coalescent rate, far inside double range (the greedy
// algorithms' durations square such terms). Together, the columns' squared spreads must stay
// below its square. A column's entries count with at least 2^-52 of their largest magnitude:
// clusters' means of equal entries differ by that much through rounding.
double largest_brownian_spread(std::size_t rows);

// Throws InputError naming `source`, the column (1-based) and the rows (1-based) at fault when a
// column's spread (or 2^-52 of its largest magnitude) is above largest_brownian_spread(rows), or
// the columns' are together, or when two entries of a column differ by less than
// kSmallestBrownianDifference without being equal. `values` is row-major, rows x cols; NaN
// entries are missing and skipped.
void check_brownian_range(const double* values, std::size_t rows, std::size_t cols,
                          const std::string& source);

// The SMC algorithms' merge times: a pair's posterior over its merge time (a GIG in log time)
// has a width of about (chi psi)^(-1/4), chi its squared distance and psi the coalescent rate
// (up to n (n - 1) / 2), and the integrals and samplers evaluate its log density relative to its
// mode with an absolute error of about 1e-16 (chi psi)^(1/4). Up to kLargestSmcScale = 1e32 that
// error stays below 1e-8; beyond ~1e60 the samplers find no envelope at all.
inline constexpr double kLargestSmcScale = 1e32;

// Throws InputError naming `source` when the largest squared distance between rows or their
// clusters' means (bounded by the sum over columns of their squared spreads, each spread at least
// 2^-52 of the column's largest magnitude) times n (n - 1) / 2 exceeds kLargestSmcScale.
void check_smc_scale(const double* values, std::size_t rows, std::size_t cols,
                     const std::string& source);

}  // namespace kingman
