#include "kingman/kernels/pair_kernels.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "lane_sums.hpp"
#include "simd_copies.hpp"

namespace kingman::kernels {

namespace {

// Rows summed side by side. One row's blocks form a chain of dependent vector additions, each
// waiting out the adder's latency for the one before; rows summed together interleave
// independent chains: four in the AVX-512 and AVX2 copies, two at a time in the baseline copy,
// whose sixteen registers hold only two rows' eight lanes beside the terms. Each row still adds
// the same terms in the same order as interleaved_sum: same bits.
constexpr std::size_t kRowsTogether = 4;

// Adds blocks [0, blocks_end) of rows first and first + 1 (and first + 2, first + 3 when Rows is
// 4) into their lanes; block(r, k) gives row r's terms k ... k + 7.
template <std::size_t Rows, std::size_t W, typename BlockTerm>
[[gnu::always_inline]] inline void add_rows_together(Block<W> (&lanes)[kRowsTogether],
                                                     std::size_t first, std::size_t blocks_end,
                                                     const BlockTerm& block) {
  static_assert(Rows == 2 || Rows == 4);
  Block<W> row0 = lanes[first], row1 = lanes[first + 1];
  if constexpr (Rows == 4) {
    Block<W> row2 = lanes[first + 2], row3 = lanes[first + 3];
    for (std::size_t k = 0; k < blocks_end; k += kLanes) {
      row0 += block(first, k);
      row1 += block(first + 1, k);
      row2 += block(first + 2, k);
      row3 += block(first + 3, k);
    }
    lanes[first + 2] = row2;
    lanes[first + 3] = row3;
  } else {
    for (std::size_t k = 0; k < blocks_end; k += kLanes) {
      row0 += block(first, k);
      row1 += block(first + 1, k);
    }
  }
  lanes[first] = row0;
  lanes[first + 1] = row1;
}

// Blocks [0, blocks_end) of all kRowsTogether rows, as many side by side as the copy's registers
// hold.
template <std::size_t W, typename BlockTerm>
[[gnu::always_inline]] inline void add_blocks_together(Block<W> (&lanes)[kRowsTogether],
                                                       std::size_t blocks_end,
                                                       const BlockTerm& block) {
  if constexpr (W == 2) {
    add_rows_together<2, W>(lanes, 0, blocks_end, block);
    add_rows_together<2, W>(lanes, 2, blocks_end, block);
  } else {
    add_rows_together<4, W>(lanes, 0, blocks_end, block);
  }
}

// finish_sum for four rows at once, row j from term begin[j] to its end[j] (half(j, k): row
// j's terms k ... k + 3; term(j, k): its term k): each row's tails go into its own lanes as in
// finish_sum, then the last two levels of the join run once for all four rows (join_four), each
// row's in finish_sum's order. Lane j of the result is row j's sum.
template <std::size_t W, typename HalfTerm, typename Term>
[[gnu::always_inline]] inline HalfBlock<W> finish_four_sums(
    const Block<W> (&lanes)[kRowsTogether], const std::size_t (&begin)[kRowsTogether],
    const std::size_t (&end)[kRowsTogether], const HalfTerm& half, const Term& term) {
  HalfBlock<W> pairs[kRowsTogether];
#pragma GCC unroll 4
  for (std::size_t j = 0; j < kRowsTogether; ++j) {
    HalfBlock<W> low = simd::low_half(lanes[j]);
    HalfBlock<W> high = simd::high_half(lanes[j]);
    std::size_t k = begin[j];
    const std::size_t count = end[j];
    if (k + 4 <= count) {
      low += half(j, k);
      k += 4;
    }
    if (k + 2 <= count) {
      high.add_to_lane(0, term(j, k));
      high.add_to_lane(1, term(j, k + 1));
      k += 2;
    }
    if (k < count) high.add_to_lane(2, term(j, k));
    pairs[j] = low + high;
  }
  return simd::join_four(pairs);
}

// (x - y)^2 for the eight (or four) coordinates from x and y.
template <typename Vector>
[[gnu::always_inline]] inline Vector squared_differences(const double* x, const double* y) {
  const Vector difference = Vector::load(x) - Vector::load(y);
  return difference * difference;
}

// a * b for the eight (or four) entries from a and b.
template <typename Vector>
[[gnu::always_inline]] inline Vector products(const double* a, const double* b) {
  return Vector::load(a) * Vector::load(b);
}

template <std::size_t W>
[[gnu::always_inline]] inline double interleaved_squared_distance(const double* x, const double* y,
                                                                  std::size_t d) {
  return interleaved_sum<W>(
      d,
      [&](std::size_t k)
          __attribute__((always_inline)) { return squared_differences<Block<W>>(x + k, y + k); },
      [&](std::size_t k) __attribute__((always_inline)) {
        const double difference = x[k] - y[k];
        return difference * difference;
      });
}

// out[r] = interleaved_squared_distance(x, row(r), d) for r < count.
template <std::size_t W, typename Row>
[[gnu::always_inline]] inline void interleaved_squared_distances(const double* x, const Row& row,
                                                                 std::size_t count, std::size_t d,
                                                                 double* out) {
  const std::size_t blocks_end = d / kLanes * kLanes;
  std::size_t r = 0;
  for (; r + kRowsTogether <= count; r += kRowsTogether) {
    const double* y[kRowsTogether];
    for (std::size_t j = 0; j < kRowsTogether; ++j) y[j] = row(r + j);
    Block<W> lanes[kRowsTogether] = {};
    add_blocks_together<W>(
        lanes, blocks_end, [&](std::size_t j, std::size_t k) __attribute__((always_inline)) {
          return squared_differences<Block<W>>(x + k, y[j] + k);
        });
    const std::size_t begins[kRowsTogether] = {blocks_end, blocks_end, blocks_end, blocks_end};
    const std::size_t ends[kRowsTogether] = {d, d, d, d};
    finish_four_sums<W>(
        lanes, begins, ends,
        [&](std::size_t j, std::size_t k) __attribute__((always_inline)) {
          return squared_differences<HalfBlock<W>>(x + k, y[j] + k);
        },
        [&](std::size_t j, std::size_t k) __attribute__((always_inline)) {
          const double difference = x[k] - y[j][k];
          return difference * difference;
        })
        .store(out + r);
  }
  for (; r < count; ++r) out[r] = interleaved_squared_distance<W>(x, row(r), d);
}

template <std::size_t W>
[[gnu::always_inline]] inline double interleaved_dot(const double* a, const double* b,
                                                     std::size_t count) {
  return interleaved_sum<W>(
      count,
      [&](std::size_t k)
          __attribute__((always_inline)) { return products<Block<W>>(a + k, b + k); },
      [&](std::size_t k) __attribute__((always_inline)) { return a[k] * b[k]; });
}

// The kernels, for simd_copies.hpp's three copies.
struct SquaredDistanceKernel {
  template <std::size_t W>
  [[gnu::always_inline]] static double run(const double* x, const double* y, std::size_t d) {
    return interleaved_squared_distance<W>(x, y, d);
  }
};

struct DistancesToRowsKernel {
  template <std::size_t W>
  [[gnu::always_inline]] static void run(const double* x, const double* const* rows,
                                         std::size_t count, std::size_t d, double* out) {
    interleaved_squared_distances<W>(
        x, [rows](std::size_t r) __attribute__((always_inline)) { return rows[r]; }, count, d, out);
  }
};

struct DistancesToBlockKernel {
  template <std::size_t W>
  [[gnu::always_inline]] static void run(const double* x, const double* block, std::size_t count,
                                         std::size_t d, std::size_t stride, double* out) {
    interleaved_squared_distances<W>(
        x, [ block,
             stride ](std::size_t r) __attribute__((always_inline)) { return block + r * stride; },
        count, d, out);
  }
};

struct DotKernel {
  template <std::size_t W>
  [[gnu::always_inline]] static double run(const double* a, const double* b, std::size_t count) {
    return interleaved_dot<W>(a, b, count);
  }
};

struct DotsWithKernel {
  template <std::size_t W>
  [[gnu::always_inline]] static void run(const double* const* rows, const std::size_t* lengths,
                                         std::size_t count, const double* weights, double* out) {
    std::size_t r = 0;
    for (; r + kRowsTogether <= count; r += kRowsTogether) {
      // The blocks that all kRowsTogether rows have, side by side; then each row's own.
      std::size_t common_end = lengths[r] / kLanes * kLanes;
      for (std::size_t j = 1; j < kRowsTogether; ++j)
        common_end = std::min(common_end, lengths[r + j] / kLanes * kLanes);
      Block<W> lanes[kRowsTogether] = {};
      add_blocks_together<W>(
          lanes, common_end, [&](std::size_t j, std::size_t k) __attribute__((always_inline)) {
            return products<Block<W>>(rows[r + j] + k, weights + k);
          });
      std::size_t blocks_end[kRowsTogether], length[kRowsTogether];
      for (std::size_t j = 0; j < kRowsTogether; ++j) {
        const double* row = rows[r + j];
        length[j] = lengths[r + j];
        blocks_end[j] = length[j] / kLanes * kLanes;
        for (std::size_t k = common_end; k < blocks_end[j]; k += kLanes)
          lanes[j] += products<Block<W>>(row + k, weights + k);
      }
      finish_four_sums<W>(
          lanes, blocks_end, length,
          [&](std::size_t j, std::size_t k) __attribute__((always_inline)) {
            return products<HalfBlock<W>>(rows[r + j] + k, weights + k);
          },
          [&](std::size_t j, std::size_t k)
              __attribute__((always_inline)) { return rows[r + j][k] * weights[k]; })
          .store(out + r);
    }
    for (; r < count; ++r) out[r] = interleaved_dot<W>(rows[r], weights, lengths[r]);
  }
};

}  // namespace

namespace {

// Eight doubles as one AVX-512 vector, and the index vector of a two-vector shuffle.
using Doubles8 = double __attribute__((vector_size(8 * sizeof(double))));
using Indices8 = std::int64_t __attribute__((vector_size(8 * sizeof(std::int64_t))));

// c[j][l] = r[l][j]: eight rows of eight doubles transposed, in three rounds of two-vector
// shuffles (pairs, then fours, then halves).
[[gnu::always_inline]] inline void transpose8(const Doubles8 (&r)[8], Doubles8 (&c)[8]) {
  const Indices8 even = {0, 8, 2, 10, 4, 12, 6, 14}, odd = {1, 9, 3, 11, 5, 13, 7, 15};
  const Indices8 low_pairs = {0, 1, 8, 9, 4, 5, 12, 13}, high_pairs = {2, 3, 10, 11, 6, 7, 14, 15};
  const Indices8 low_half = {0, 1, 2, 3, 8, 9, 10, 11}, high_half = {4, 5, 6, 7, 12, 13, 14, 15};
  Doubles8 t[8], u[8];
  for (std::size_t i = 0; i < 8; i += 2) {
    t[i] = __builtin_shuffle(r[i], r[i + 1], even);     // rows i, i+1: elements 0, 2, 4, 6
    t[i + 1] = __builtin_shuffle(r[i], r[i + 1], odd);  // elements 1, 3, 5, 7
  }
  for (std::size_t i = 0; i < 8; i += 4) {
    for (std::size_t o = 0; o < 2; ++o) {
      u[i + o] = __builtin_shuffle(t[i + o], t[i + 2 + o], low_pairs);       // elements o, o+4
      u[i + 2 + o] = __builtin_shuffle(t[i + o], t[i + 2 + o], high_pairs);  // o+2, o+6
    }
  }
  for (std::size_t e = 0; e < 4; ++e) {
    c[e] = __builtin_shuffle(u[e], u[4 + e], low_half);       // element e of the eight rows
    c[e + 4] = __builtin_shuffle(u[e], u[4 + e], high_half);  // element e + 4
  }
}

struct SquaredDistancesInOrderKernel {
  template <std::size_t W>
  [[gnu::always_inline]] static void run(const double* x, const double* const* rows,
                                         std::size_t count, std::size_t d, double* out) {
    constexpr std::size_t kLanes = 8;
    std::size_t k = 0;
    for (; k + kLanes <= count; k += kLanes) {
      const double* row[kLanes];
      double sum[kLanes];
      for (std::size_t l = 0; l < kLanes; ++l) {
        row[l] = rows[k + l];
        sum[l] = 0.0;
      }
      std::size_t first = 0;  // the dimensions summed so far, in order
      if constexpr (W == 8) {
        // Eight dimensions of the eight rows at a time: eight vector loads and a transpose in
        // place of 64 scalar loads into lanes (the loop below, which GCC compiles to one load
        // and insert per element). Each lane still adds its squares in dimension order, as a
        // multiply and then an add: the same bits.
        Doubles8 lanes = {};
        for (; first + 8 <= d; first += 8) {
          Doubles8 block[8], by_dimension[8];
          for (std::size_t l = 0; l < kLanes; ++l)
            std::memcpy(&block[l], row[l] + first, sizeof(Doubles8));
          transpose8(block, by_dimension);
          for (std::size_t e = 0; e < 8; ++e) {
            const Doubles8 difference = (Doubles8{} + x[first + e]) - by_dimension[e];
            lanes = lanes + difference * difference;
          }
        }
        std::memcpy(sum, &lanes, sizeof(sum));
      }
      for (std::size_t j = first; j < d; ++j) {
        const double xj = x[j];
        for (std::size_t l = 0; l < kLanes; ++l) sum[l] += (xj - row[l][j]) * (xj - row[l][j]);
      }
      for (std::size_t l = 0; l < kLanes; ++l) out[k + l] = sum[l];
    }
    for (; k < count; ++k) {
      double sum = 0.0;
      for (std::size_t j = 0; j < d; ++j) sum += (x[j] - rows[k][j]) * (x[j] - rows[k][j]);
      out[k] = sum;
    }
  }
};

// The partners p .. p + 7 (the last one repeated past `lanes`) transposed into `by_dimension`:
// by_dimension[8 j + l] = partner l's coordinate j.
template <std::size_t W>
[[gnu::always_inline]] inline void transpose_partner_block(const double* const* partners,
                                                           std::size_t lanes, std::size_t d,
                                                           double* by_dimension) {
  constexpr std::size_t kLanes = 8;
  const double* row[kLanes];
  for (std::size_t l = 0; l < kLanes; ++l) row[l] = partners[std::min(l, lanes - 1)];
  std::size_t first = 0;
  if constexpr (W == 8) {
    for (; first + 8 <= d; first += 8) {
      Doubles8 block[8], columns[8];
      for (std::size_t l = 0; l < kLanes; ++l)
        std::memcpy(&block[l], row[l] + first, sizeof(Doubles8));
      transpose8(block, columns);
      std::memcpy(by_dimension + kLanes * first, columns, sizeof(columns));
    }
  }
  for (std::size_t j = first; j < d; ++j)
    for (std::size_t l = 0; l < kLanes; ++l) by_dimension[kLanes * j + l] = row[l][j];
}

struct SquaredDistancesInOrderSharedKernel {
  template <std::size_t W>
  [[gnu::always_inline]] static void run(const double* const* queries, const std::size_t* first,
                                         std::size_t rows, const double* const* partners,
                                         std::size_t count, std::size_t d, double* by_dimension,
                                         double* const* out) {
    using L = simd::Lanes<8, W>;
    constexpr std::size_t kLanes = 8;
    if (rows == 0) return;
    std::size_t active = 0;  // rows whose partners begin before the block's end
    for (std::size_t p = first[0]; p < count; p += kLanes) {
      const std::size_t lanes = std::min(kLanes, count - p);
      transpose_partner_block<W>(partners + p, lanes, d, by_dimension);
      while (active < rows && first[active] < p + kLanes) ++active;
      // Row q's lanes from its first partner on, up to the last partner.
      auto store = [&](std::size_t q, const L& sums) __attribute__((always_inline)) {
        const std::size_t begin = first[q];
        if (begin <= p && lanes == kLanes) {
          sums.store(out[q] + (p - begin));
        } else {
          for (std::size_t l = std::max(begin, p) - p; l < lanes; ++l)
            out[q][p + l - begin] = sums[l];
        }
      };
      // Each lane adds its squares in dimension order, a multiply and then an add, from 0:
      // squared_distance_reference's roundings. Four rows side by side share the block's loads
      // and overlap their chains of additions.
      std::size_t q = 0;
      for (; q + 4 <= active; q += 4) {
        L s0 = L::zero(), s1 = L::zero(), s2 = L::zero(), s3 = L::zero();
        const double *x0 = queries[q], *x1 = queries[q + 1], *x2 = queries[q + 2],
                     *x3 = queries[q + 3];
        for (std::size_t j = 0; j < d; ++j) {
          const L partner = L::load(by_dimension + kLanes * j);
          const L e0 = L::splat(x0[j]) - partner, e1 = L::splat(x1[j]) - partner;
          const L e2 = L::splat(x2[j]) - partner, e3 = L::splat(x3[j]) - partner;
          s0 = s0 + e0 * e0;
          s1 = s1 + e1 * e1;
          s2 = s2 + e2 * e2;
          s3 = s3 + e3 * e3;
        }
        store(q, s0);
        store(q + 1, s1);
        store(q + 2, s2);
        store(q + 3, s3);
      }
      for (; q < active; ++q) {
        L s = L::zero();
        const double* x = queries[q];
        for (std::size_t j = 0; j < d; ++j) {
          const L e = L::splat(x[j]) - L::load(by_dimension + kLanes * j);
          s = s + e * e;
        }
        store(q, s);
      }
    }
  }
};

}  // namespace

void squared_distances_in_order(const double* x, const double* const* rows, std::size_t count,
                                std::size_t d, double* out) {
  detail::run_in_copy<SquaredDistancesInOrderKernel>(x, rows, count, d, out);
}

void squared_distances_in_order_shared(const double* const* queries, const std::size_t* first,
                                       std::size_t rows, const double* const* partners,
                                       std::size_t count, std::size_t d, double* const* out) {
  for (std::size_t q = 0; q < rows; ++q) {
    if (first[q] > count || (q > 0 && first[q] < first[q - 1]))
      throw std::invalid_argument(
          "squared_distances_in_order_shared: the rows' first partners must be nondecreasing and "
          "at most the partner count");
  }
  thread_local std::vector<double> by_dimension;
  by_dimension.resize(8 * d);
  detail::run_in_copy<SquaredDistancesInOrderSharedKernel>(queries, first, rows, partners, count, d,
                                                           by_dimension.data(), out);
}

double squared_distance_reference(const double* x, const double* y, std::size_t d) {
  double sum = 0.0;
  for (std::size_t k = 0; k < d; ++k) sum += (x[k] - y[k]) * (x[k] - y[k]);
  return sum;
}

double squared_distance(const double* x, const double* y, std::size_t d) {
  return detail::run_in_copy<SquaredDistanceKernel>(x, y, d);
}

void squared_distances_to_rows(const double* x, const double* const* rows, std::size_t count,
                               std::size_t d, double* out) {
  detail::run_in_copy<DistancesToRowsKernel>(x, rows, count, d, out);
}

void squared_distances_to_block(const double* x, const double* block, std::size_t count,
                                std::size_t d, std::size_t stride, double* out) {
  detail::run_in_copy<DistancesToBlockKernel>(x, block, count, d, stride, out);
}

double dot(const double* a, const double* b, std::size_t count) {
  return detail::run_in_copy<DotKernel>(a, b, count);
}

void dots_with(const double* const* rows, const std::size_t* lengths, std::size_t count,
               const double* weights, double* out) {
  detail::run_in_copy<DotsWithKernel>(rows, lengths, count, weights, out);
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
