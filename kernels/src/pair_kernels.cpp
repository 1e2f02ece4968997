#include "kingman/kernels/pair_kernels.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <stdexcept>

#include "vector_clones.hpp"

namespace kingman::kernels {

namespace {

constexpr std::size_t kLanes = 8;

// sum_k term(k) for k < count in eight interleaved partial sums: blocks of eight, then a tail of
// four, two and one terms into fixed lanes (constant lane indices keep the sums in registers),
// joined in a fixed order. Inlined into each kernel below, and so into each of their SIMD
// copies, which therefore all compute the same bits.
template <typename Term>
inline double interleaved_sum(std::size_t count, const Term& term) {
  double partial[kLanes] = {};
  std::size_t k = 0;
  for (; k + kLanes <= count; k += kLanes) {
    for (std::size_t l = 0; l < kLanes; ++l) partial[l] += term(k + l);
  }
  if (k + 4 <= count) {
    for (std::size_t l = 0; l < 4; ++l) partial[l] += term(k + l);
    k += 4;
  }
  if (k + 2 <= count) {
    partial[4] += term(k);
    partial[5] += term(k + 1);
    k += 2;
  }
  if (k < count) partial[6] += term(k);
  return ((partial[0] + partial[4]) + (partial[1] + partial[5])) +
         ((partial[2] + partial[6]) + (partial[3] + partial[7]));
}

inline double interleaved_squared_distance(const double* x, const double* y, std::size_t d) {
  return interleaved_sum(d, [&](std::size_t k) {
    const double difference = x[k] - y[k];
    return difference * difference;
  });
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
  for (std::size_t r = 0; r < count; ++r) out[r] = interleaved_squared_distance(x, rows[r], d);
}

KINGMAN_VECTOR_CLONES
void squared_distances_to_block(const double* x, const double* block, std::size_t count,
                                std::size_t d, std::size_t stride, double* out) {
  for (std::size_t r = 0; r < count; ++r)
    out[r] = interleaved_squared_distance(x, block + r * stride, d);
}

namespace {

inline double interleaved_dot(const double* a, const double* b, std::size_t count) {
  return interleaved_sum(count, [&](std::size_t k) { return a[k] * b[k]; });
}

}  // namespace

KINGMAN_VECTOR_CLONES
double dot(const double* a, const double* b, std::size_t count) {
  return interleaved_dot(a, b, count);
}

KINGMAN_VECTOR_CLONES
void dots_with(const double* const* rows, const std::size_t* lengths, std::size_t count,
               const double* weights, double* out) {
  for (std::size_t r = 0; r < count; ++r) out[r] = interleaved_dot(rows[r], weights, lengths[r]);
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
