#include "kingman/kernels/pair_kernels.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "lane_sums.hpp"
#include "vector_clones.hpp"

namespace kingman::kernels {

namespace {

// Rows summed side by side. One row's blocks form a chain of dependent vector additions, each
// waiting out the adder's latency for the one before; kRowsTogether rows interleave independent
// chains. Each row still adds the same terms in the same order as interleaved_sum: same bits.
constexpr std::size_t kRowsTogether = 4;

// Adds blocks [0, blocks_end) of kRowsTogether rows (block(r, k, terms): row r's terms
// k ... k + 7) into their lanes.
template <typename BlockTerm>
[[gnu::always_inline]] inline void add_blocks_together(Block (&lanes)[kRowsTogether],
                                                       std::size_t blocks_end,
                                                       const BlockTerm& block) {
  static_assert(kRowsTogether == 4);
  Block first = lanes[0], second = lanes[1], third = lanes[2], fourth = lanes[3], terms;
  for (std::size_t k = 0; k < blocks_end; k += kLanes) {
    block(0, k, terms);
    first += terms;
    block(1, k, terms);
    second += terms;
    block(2, k, terms);
    third += terms;
    block(3, k, terms);
    fourth += terms;
  }
  lanes[0] = first;
  lanes[1] = second;
  lanes[2] = third;
  lanes[3] = fourth;
}

// finish_sum for four rows at once into `sums`, row j from term begin[j] to its end[j]
// (half(j, k, terms): row j's terms k ... k + 3; term(j, k): its term k). Each row's tails go
// into its own lanes as in finish_sum, then the four rows' lane pairs are transposed so that the
// last two levels of the join run once for all four, each row's in its order.
template <typename HalfTerm, typename Term>
[[gnu::always_inline]] inline void finish_four_sums(const Block (&lanes)[4],
                                                    const std::size_t (&begin)[4],
                                                    const std::size_t (&end)[4],
                                                    const HalfTerm& half, const Term& term,
                                                    HalfBlock& sums) {
  HalfBlock pairs[4];
#pragma GCC unroll 4
  for (std::size_t j = 0; j < 4; ++j) {
    HalfBlock low = __builtin_shufflevector(lanes[j], lanes[j], 0, 1, 2, 3);
    HalfBlock high = __builtin_shufflevector(lanes[j], lanes[j], 4, 5, 6, 7);
    std::size_t k = begin[j];
    const std::size_t count = end[j];
    if (k + 4 <= count) {
      HalfBlock terms;
      half(j, k, terms);
      low += terms;
      k += 4;
    }
    if (k + 2 <= count) {
      high[0] += term(j, k);
      high[1] += term(j, k + 1);
      k += 2;
    }
    if (k < count) high[2] += term(j, k);
    pairs[j] = low + high;
  }
  // column[c] holds lane c of each row's pairs.
  const HalfBlock even01 = __builtin_shufflevector(pairs[0], pairs[1], 0, 4, 2, 6);
  const HalfBlock odd01 = __builtin_shufflevector(pairs[0], pairs[1], 1, 5, 3, 7);
  const HalfBlock even23 = __builtin_shufflevector(pairs[2], pairs[3], 0, 4, 2, 6);
  const HalfBlock odd23 = __builtin_shufflevector(pairs[2], pairs[3], 1, 5, 3, 7);
  const HalfBlock column0 = __builtin_shufflevector(even01, even23, 0, 1, 4, 5);
  const HalfBlock column1 = __builtin_shufflevector(odd01, odd23, 0, 1, 4, 5);
  const HalfBlock column2 = __builtin_shufflevector(even01, even23, 2, 3, 6, 7);
  const HalfBlock column3 = __builtin_shufflevector(odd01, odd23, 2, 3, 6, 7);
  sums = (column0 + column1) + (column2 + column3);
}

// (x - y)^2 for the eight (or four) coordinates from x and y.
template <typename Vector>
[[gnu::always_inline]] inline void squared_differences(const double* x, const double* y,
                                                       Vector& terms) {
  Vector from_x, from_y;
  std::memcpy(&from_x, x, sizeof from_x);
  std::memcpy(&from_y, y, sizeof from_y);
  const Vector difference = from_x - from_y;
  terms = difference * difference;
}

// a * b for the eight (or four) entries from a and b.
template <typename Vector>
[[gnu::always_inline]] inline void products(const double* a, const double* b, Vector& terms) {
  Vector from_a, from_b;
  std::memcpy(&from_a, a, sizeof from_a);
  std::memcpy(&from_b, b, sizeof from_b);
  terms = from_a * from_b;
}

[[gnu::always_inline]] inline double interleaved_squared_distance(const double* x, const double* y,
                                                                  std::size_t d) {
  return interleaved_sum(
      d,
      [&](std::size_t k, Block & terms)
          __attribute__((always_inline)) { squared_differences(x + k, y + k, terms); },
      [&](std::size_t k) __attribute__((always_inline)) {
        const double difference = x[k] - y[k];
        return difference * difference;
      });
}

// out[r] = interleaved_squared_distance(x, row(r), d) for r < count.
template <typename Row>
[[gnu::always_inline]] inline void interleaved_squared_distances(const double* x, const Row& row,
                                                                 std::size_t count, std::size_t d,
                                                                 double* out) {
  const std::size_t blocks_end = d / kLanes * kLanes;
  std::size_t r = 0;
  for (; r + kRowsTogether <= count; r += kRowsTogether) {
    const double* y[kRowsTogether];
    for (std::size_t j = 0; j < kRowsTogether; ++j) y[j] = row(r + j);
    Block lanes[kRowsTogether] = {};
    add_blocks_together(
        lanes, blocks_end,
        [&](std::size_t j, std::size_t k, Block & terms)
            __attribute__((always_inline)) { squared_differences(x + k, y[j] + k, terms); });
    const std::size_t begins[4] = {blocks_end, blocks_end, blocks_end, blocks_end};
    const std::size_t ends[4] = {d, d, d, d};
    HalfBlock sums;
    finish_four_sums(
        lanes, begins, ends,
        [&](std::size_t j, std::size_t k, HalfBlock & terms)
            __attribute__((always_inline)) { squared_differences(x + k, y[j] + k, terms); },
        [&](std::size_t j, std::size_t k) __attribute__((always_inline)) {
          const double difference = x[k] - y[j][k];
          return difference * difference;
        },
        sums);
    std::memcpy(out + r, &sums, sizeof sums);
  }
  for (; r < count; ++r) out[r] = interleaved_squared_distance(x, row(r), d);
}

[[gnu::always_inline]] inline double interleaved_dot(const double* a, const double* b,
                                                     std::size_t count) {
  return interleaved_sum(
      count,
      [&](std::size_t k, Block & terms)
          __attribute__((always_inline)) { products(a + k, b + k, terms); },
      [&](std::size_t k) __attribute__((always_inline)) { return a[k] * b[k]; });
}

}  // namespace

double squared_distance_reference(const double* x, const double* y, std::size_t d) {
  double sum = 0.0;
  for (std::size_t k = 0; k < d; ++k) sum += (x[k] - y[k]) * (x[k] - y[k]);
  return sum;
}

KINGMAN_VECTOR_CLONES
double squared_distance(const double* x, const double* y, std::size_t d) {
  return interleaved_squared_distance(x, y, d);
}

KINGMAN_VECTOR_CLONES
void squared_distances_to_rows(const double* x, const double* const* rows, std::size_t count,
                               std::size_t d, double* out) {
  interleaved_squared_distances(
      x, [rows](std::size_t r) { return rows[r]; }, count, d, out);
}

KINGMAN_VECTOR_CLONES
void squared_distances_to_block(const double* x, const double* block, std::size_t count,
                                std::size_t d, std::size_t stride, double* out) {
  interleaved_squared_distances(
      x, [block, stride](std::size_t r) { return block + r * stride; }, count, d, out);
}

KINGMAN_VECTOR_CLONES
double dot(const double* a, const double* b, std::size_t count) {
  return interleaved_dot(a, b, count);
}

KINGMAN_VECTOR_CLONES
void dots_with(const double* const* rows, const std::size_t* lengths, std::size_t count,
               const double* weights, double* out) {
  std::size_t r = 0;
  for (; r + kRowsTogether <= count; r += kRowsTogether) {
    // The blocks that all kRowsTogether rows have, side by side; then each row's own.
    std::size_t common_end = lengths[r] / kLanes * kLanes;
    for (std::size_t j = 1; j < kRowsTogether; ++j)
      common_end = std::min(common_end, lengths[r + j] / kLanes * kLanes);
    Block lanes[kRowsTogether] = {};
    add_blocks_together(
        lanes, common_end,
        [&](std::size_t j, std::size_t k, Block & terms)
            __attribute__((always_inline)) { products(rows[r + j] + k, weights + k, terms); });
    std::size_t blocks_end[kRowsTogether], length[kRowsTogether];
    for (std::size_t j = 0; j < kRowsTogether; ++j) {
      const double* row = rows[r + j];
      length[j] = lengths[r + j];
      blocks_end[j] = length[j] / kLanes * kLanes;
      Block terms;
      for (std::size_t k = common_end; k < blocks_end[j]; k += kLanes) {
        products(row + k, weights + k, terms);
        lanes[j] += terms;
      }
    }
    HalfBlock sums;
    finish_four_sums(
        lanes, blocks_end, length,
        [&](std::size_t j, std::size_t k, HalfBlock & terms)
            __attribute__((always_inline)) { products(rows[r + j] + k, weights + k, terms); },
        [&](std::size_t j, std::size_t k)
            __attribute__((always_inline)) { return rows[r + j][k] * weights[k]; },
        sums);
    std::memcpy(out + r, &sums, sizeof sums);
  }
  for (; r < count; ++r) out[r] = interleaved_dot(rows[r], weights, lengths[r]);
}

PairDistanceTiles::PairDistanceTiles(const double* x, std::size_t n, std::size_t d,
                                     double recompute_fraction)
    : n_(n),
      d_(d),
      recompute_fraction_(recompute_fraction),
      x_(x),
      centred_(x, x + n * d),
      norms_(n) {
  if (!(recompute_fraction >= 0.0 && recompute_fraction <= 1.0)) {
    throw std::domain_error("PairDistanceTiles: recompute_fraction must be in [0, 1]");
  }
  // Centring shortens the vectors without changing any difference, which shrinks the norms
  // that the product form cancels against.
  std::vector<double> mean(d, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < d; ++k) mean[k] += x[i * d + k];
  for (double& m : mean) m /= static_cast<double>(std::max<std::size_t>(n, 1));
  for (std::size_t i = 0; i < n; ++i) {
    double* row = centred_.data() + i * d;
    for (std::size_t k = 0; k < d; ++k) row[k] -= mean[k];
    norms_[i] = dot(row, row, d);
  }
}

std::size_t PairDistanceTiles::tile_end(std::size_t tile) const {
  return std::min(n_, (tile + 1) * kTile);
}

std::size_t PairDistanceTiles::compute(std::size_t a, std::size_t b, double* out) const {
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const std::size_t row_begin = tile_begin(a), col_begin = tile_begin(b);
  const auto rows = static_cast<Eigen::Index>(tile_end(a) - row_begin);
  const auto cols = static_cast<Eigen::Index>(tile_end(b) - col_begin);
  const auto d = static_cast<Eigen::Index>(d_);
  const Eigen::Map<const RowMajor> left(centred_.data() + row_begin * d_, rows, d);
  const Eigen::Map<const RowMajor> right(centred_.data() + col_begin * d_, cols, d);
  Eigen::Map<RowMajor, 0, Eigen::OuterStride<>> products(out, rows, cols,
                                                         Eigen::OuterStride<>(kTile));
  products.noalias() = left * right.transpose();

  std::size_t recomputed = 0;
  for (Eigen::Index i = 0; i < rows; ++i) {
    const std::size_t p = row_begin + static_cast<std::size_t>(i);
    double* row = out + static_cast<std::size_t>(i) * kTile;
    for (Eigen::Index j = a == b ? i + 1 : 0; j < cols; ++j) {
      const std::size_t q = col_begin + static_cast<std::size_t>(j);
      const double norms = norms_[p] + norms_[q];
      const double distance = norms - 2.0 * row[j];
      if (distance >= recompute_fraction_ * norms) {
        row[j] = distance;
      } else {
        row[j] = squared_distance(x_ + p * d_, x_ + q * d_, d_);
        ++recomputed;
      }
    }
  }
  return recomputed;
}

void pair_distance_tile_reference(const double* x, std::size_t n, std::size_t d, std::size_t a,
                                  std::size_t b, double* out) {
  const std::size_t tile = PairDistanceTiles::kTile;
  for (std::size_t i = a * tile; i < std::min(n, (a + 1) * tile); ++i) {
    for (std::size_t j = std::max(b * tile, a == b ? i + 1 : 0); j < std::min(n, (b + 1) * tile);
         ++j) {
      out[(i - a * tile) * tile + (j - b * tile)] =
          squared_distance_reference(x + i * d, x + j * d, d);
    }
  }
}

}  // namespace kingman::kernels
