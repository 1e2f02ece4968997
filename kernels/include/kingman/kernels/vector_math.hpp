#pragma once
// log and exp over arrays, written as branch-free element-wise loops that the compiler
// vectorizes (two doubles per SSE2 instruction in the portable build; more with wider vector
// units), for the per-pair work of the SMC proposals: glibc's log and exp are scalar calls.
// Both use plain Taylor series of a reduced argument (no tabulated constants), with errors of a
// few ulps: log_array within 4e-16 * max(1, |log x|) absolute, exp_array within 6e-16 relative
// (tests/kernels/vector_math_test.cpp checks both against libm).
#include <cstddef>

namespace kingman::kernels {

// out[i] = log(x[i]) for positive normal x[i] (other inputs give unspecified values; callers
// clamp). `out` may alias `x`.
void log_array(const double* x, double* out, std::size_t count);

// out[i] = exp(x[i]) for x[i] <= 709; results below the smallest normal double (x < -708.39)
// are 0. `out` may alias `x`.
void exp_array(const double* x, double* out, std::size_t count);

// For y[i] <= 0: e[i] = exp(y[i]) and complement[i] = 1 - exp(y[i]) = -expm1(y[i]), each
// within a few ulps relative (so the complement keeps its precision as y -> 0, where 1 - e[i]
// would cancel); y[i] below -708 is taken as -708 (e ~ 3e-308). Neither output may alias y.
void exp_with_complement_array(const double* y, double* e, double* complement, std::size_t count);

// out[i] = sqrt(x[i]) (correctly rounded, as std::sqrt) for x[i] >= 0, vectorized. `out` may
// alias `x`.
void sqrt_array(const double* x, double* out, std::size_t count);

// The largest x[i] (NaN entries are passed over), -inf for count = 0. A kernel of its own:
// inlined as a running std::max into a large function, GCC kept the maximum in memory.
double max_array(const double* x, std::size_t count);

// The index of the first smallest entry among those below `bound` (NaN entries are never below
// anything), or `count` if there is none: what a scan that keeps the first of equal minima
// finds, in SIMD (a vector minimum, then the first entry equal to it; -0 and +0 count as equal,
// as they do for the scan). The rescanning greedy algorithms' choice within a row of scores.
std::size_t first_minimum_below(const double* x, std::size_t count, double bound);
// The same, and `has_nan` set to whether any entry is NaN, in the same pass.
std::size_t first_minimum_below(const double* x, std::size_t count, double bound, bool& has_nan);

// The index of the first entry at most `bound` (NaN entries never are), or `count` if there is
// none, eight entries at a time: the few pairs of a Greedy-MaxProb row that its score bounds
// leave to be scored exactly (maxprob_bounds.hpp).
std::size_t first_at_most(const double* x, std::size_t count, double bound);

// The index of the first NaN entry, or `count` if there is none, eight entries at a time: a
// row of pair scores checked while it is still in cache (generic_linkage.hpp).
std::size_t first_nan(const double* x, std::size_t count);

// out[i] = wa * a[i] + wb * b[i] (each product rounded, then the sum: never fused), vectorized:
// a merged cluster's mean from its children's. `out` must not overlap a or b.
void weighted_sum(double wa, const double* a, double wb, const double* b, double* out,
                  std::size_t count);

// product[i] *= (a[i] + b[i] c[0]) (a[i] + b[i] c[1]) ... (a[i] + b[i] c[count - 1]) for
// i < size, a multiple of 8 (callers pad with a = 1, b = 0, which leaves the product as it is).
// Each factor is rounded as a product and then a sum (never fused) and multiplied in in the
// order of c, so every lane gets the scalar loop's bits. The products stay in registers across
// the factors: the binary model's pair masses, one product per Gauss-Jacobi node and a factor
// per column (discrete_pair_mass.cpp). `product` must not overlap a, b or c.
void multiply_affine_factors(double* product, const double* a, const double* b, std::size_t size,
                             const double* c, std::size_t count);

// out[j] = q[2j] l[2j] r[2j] + q[2j + 1] l[2j + 1] r[2j + 1] for j < columns, each product
// rounded left to right and then the sum (never fused), so every column gets the scalar
// expression's bits: the binary model's column overlaps of two clusters' messages l and r under
// the equilibrium q (DiscretePair::assign, once per pair). `out` must not overlap q, l or r.
void binary_overlaps(const double* q, const double* l, const double* r, double* out,
                     std::size_t columns);

}  // namespace kingman::kernels
