#pragma once
// Squared Euclidean distances between rows of whitened data (MODEL.md section 3.1: every eps is
// one), in the three shapes the engine needs, each with a plain reference beside it
// (tests/kernels/pair_kernels_test.cpp checks one against the other):
//  - one pair, and one row against many (a new cluster against the live ones): the difference
//    form sum_k (x_k - y_k)^2 with eight interleaved partial sums, which the compiler turns into
//    SIMD; relative error below (d + 3) u (u = 2^-53) like the reference's sequential sum, and
//    the same bits whichever SIMD width runs (the order of the sums is fixed);
//  - all pairs of a point set, tile by tile (PairDistanceTiles): ||x||^2 + ||y||^2 - 2 x.y with
//    the inner products of a tile as one blocked matrix product (Eigen), after centring the
//    points; where that form cancels (small distances between long vectors) the pair is
//    recomputed by the difference form. Its error bound is stated with the class.
#include <cstddef>
#include <vector>

namespace kingman::kernels {

// Reference: sum over k in index order of (x_k - y_k)^2.
double squared_distance_reference(const double* x, const double* y, std::size_t d);

// The same sum in eight interleaved partial sums (SIMD).
double squared_distance(const double* x, const double* y, std::size_t d);

// out[k] = squared_distance(x, rows[k], d) for k < count, bit for bit: one point against rows
// anywhere in memory (the SMC's clusters each own their mean). Rows are summed four side by
// side, each in squared_distance's order.
void squared_distances_to_rows(const double* x, const double* const* rows, std::size_t count,
                               std::size_t d, double* out);

// out[k] = squared_distance_reference(x, rows[k], d) for k < count, bit for bit: each sum in
// index order, as a scalar loop adds, with eight rows side by side in SIMD lanes (a row's sum is
// a chain of dependent additions; eight chains overlap). The rescanning greedy algorithms'
// distances, which must be the engine's scalar ones (BrownianMessages::squared_distance).
void squared_distances_in_order(const double* x, const double* const* rows, std::size_t count,
                                std::size_t d, double* out);

// Many rows of squared_distances_in_order over one list of partners, bit for bit: for each row
// q < rows, out[q][k - first[q]] = squared_distance_reference(queries[q], partners[k], d) for
// first[q] <= k < count, with first nondecreasing (std::invalid_argument otherwise). Each block
// of eight partners is loaded and transposed once for every row it serves, and four rows share
// each load (the rescanning greedies' rows rescored together, row_bound_step.hpp).
void squared_distances_in_order_shared(const double* const* queries, const std::size_t* first,
                                       std::size_t rows, const double* const* partners,
                                       std::size_t count, std::size_t d, double* const* out);

// out[k] = squared_distance(x, block + k * stride, d) for k < count: one point against a
// contiguous block of rows.
void squared_distances_to_block(const double* x, const double* block, std::size_t count,
                                std::size_t d, std::size_t stride, double* out);

// sum_k a[k] b[k] in eight interleaved partial sums (SIMD).
double dot(const double* a, const double* b, std::size_t count);

// out[r] = dot(rows[r], weights, lengths[r]) for r < count, bit for bit: many rows against one
// weight vector in one call (MPost2's owner rows against the per-cluster factors), four rows
// side by side as far as they all reach.
void dots_with(const double* const* rows, const std::size_t* lengths, std::size_t count,
               const double* weights, double* out);

// All pairwise squared distances of n points (rows of `x`, row-major n x d), tile by tile:
// tiles of kTile x kTile pairs, so that a caller can score each tile while it is in cache
// (and run tiles in parallel: compute() is const and thread-safe).
//
// Accuracy, with tau = recompute_fraction: for the centred points c_i and N_ij = ||c_i||^2 +
// ||c_j||^2, the product form D = N_ij - 2 c_i.c_j has an absolute error below (2d + 3) u N_ij
// (each inner product and norm carries at most d u of its magnitude, |2 c_i.c_j| <= N_ij, and
// three roundings join them), and rounding the centred coordinates moves D by at most
// 2 u sqrt(2 N_ij D). A pair kept in product form has D >= tau N_ij, so its relative error is
// below (2d + 3) u / tau + 2 u sqrt(2 / tau) <= (2d + 6) u / tau (for d = 64 and the default
// tau = 1e-3: 1.5e-11); pairs with D < tau N_ij are recomputed by squared_distance on the
// original rows, within (d + 3) u. The rows `x` must outlive the object.
class PairDistanceTiles {
 public:
  static constexpr std::size_t kTile = 128;  // 128 x d inputs twice and a 128 x 128 output:
                                             // 0.5 MiB at d = 192, within a 1 MiB L2
  static constexpr double kDefaultRecomputeFraction = 1e-3;

  PairDistanceTiles(const double* x, std::size_t n, std::size_t d,
                    double recompute_fraction = kDefaultRecomputeFraction);

  std::size_t point_count() const { return n_; }
  std::size_t tile_count() const { return (n_ + kTile - 1) / kTile; }
  // Rows [tile * kTile, min(n, (tile + 1) * kTile)).
  std::size_t tile_begin(std::size_t tile) const { return tile * kTile; }
  std::size_t tile_end(std::size_t tile) const;

  // Squared distances between the points of row tile `a` and column tile `b` (a <= b):
  // out[i * kTile + j] for the pair (tile_begin(a) + i, tile_begin(b) + j). When a == b only
  // the entries with i < j are written. `out` holds kTile * kTile doubles.
  // Returns the number of pairs recomputed by the difference form.
  std::size_t compute(std::size_t a, std::size_t b, double* out) const;

 private:
  std::size_t n_, d_;
  double recompute_fraction_;
  const double* x_;              // the original rows (recomputed pairs)
  std::vector<double> centred_;  // row-major n x d, x minus the column means
  std::vector<double> norms_;    // ||c_i||^2
};

// Reference for PairDistanceTiles::compute: squared_distance_reference of each pair of the tile
// on the original (uncentred) rows.
void pair_distance_tile_reference(const double* x, std::size_t n, std::size_t d, std::size_t a,
                                  std::size_t b, double* out);

}  // namespace kingman::kernels
