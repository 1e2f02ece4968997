#include "kingman/kernels/fixed_order_bessel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <stdexcept>

#include "kingman/kernels/log_bessel_k.hpp"
#include "vector_clones.hpp"
#include "vector_math_detail.hpp"

namespace kingman::kernels {

namespace {

double exact(double nu, double u) {
  return log_bessel_k(nu, std::exp(0.5 * u));
}

// Chebyshev coefficients of f on [a, b] from its values at the Chebyshev nodes.
void fit_piece(double nu, double a, double b, int degree, double* c) {
  const int nodes = degree + 1;
  std::vector<double> values(nodes);
  for (int k = 0; k < nodes; ++k) {
    const double x = std::cos(std::numbers::pi * (k + 0.5) / nodes);
    values[k] = exact(nu, 0.5 * (a + b) + 0.5 * (b - a) * x);
  }
  for (int j = 0; j <= degree; ++j) {
    double sum = 0.0;
    for (int k = 0; k < nodes; ++k)
      sum += values[k] * std::cos(std::numbers::pi * j * (k + 0.5) / nodes);
    c[j] = (j == 0 ? 1.0 : 2.0) * sum / nodes;
  }
}

// Clenshaw's recurrence for sum_j c_j T_j(x), x in [-1, 1].
double clenshaw(const double* c, int degree, double x) {
  double b1 = 0.0, b2 = 0.0;
  const double two_x = 2.0 * x;
  for (int j = degree; j >= 1; --j) {
    const double b0 = c[j] + two_x * b1 - b2;
    b2 = b1;
    b1 = b0;
  }
  return c[0] + x * b1 - b2;
}

}  // namespace

LogBesselKFixedOrder::LogBesselKFixedOrder(double nu, double x_min, double x_max) : nu_(nu) {
  if (!(x_min > 0.0) || !(x_max > x_min) || !std::isfinite(x_max)) {
    throw std::domain_error("LogBesselKFixedOrder: need 0 < x_min < x_max < inf");
  }
  x_min_ = x_min;
  x_max_ = x_max;
  u_min_ = std::log(x_min);
  u_max_ = std::log(x_max);
  // Start with pieces of width 1 in u and halve until every piece passes its check.
  pieces_ = static_cast<std::size_t>(std::ceil(u_max_ - u_min_)) + 1;
  for (int attempt = 0;; ++attempt) {
    const double width = (u_max_ - u_min_) / static_cast<double>(pieces_);
    coefficients_.assign(pieces_ * (kDegree + 1), 0.0);
    bool accurate = true;
    for (std::size_t i = 0; i < pieces_ && accurate; ++i) {
      const double a = u_min_ + width * static_cast<double>(i), b = a + width;
      double* c = coefficients_.data() + i * (kDegree + 1);
      fit_piece(nu_, a, b, kDegree, c);
      // Check between the nodes and at the ends, where interpolation error peaks.
      for (int k = 0; k <= 2 * kDegree + 2 && accurate; ++k) {
        const double x = -1.0 + 2.0 * k / (2.0 * kDegree + 2.0);
        const double want = exact(nu_, 0.5 * (a + b) + 0.5 * (b - a) * x);
        const double got = clenshaw(c, kDegree, x);
        accurate = std::abs(got - want) <= 1e-13 * std::max(1.0, std::abs(want));
      }
    }
    if (accurate) break;
    if (attempt == 12) throw std::runtime_error("LogBesselKFixedOrder: fit did not converge");
    pieces_ *= 2;
  }
  inverse_width_ = static_cast<double>(pieces_) / (u_max_ - u_min_);
}

double LogBesselKFixedOrder::of_square(double x, double u) const {
  if (!(u >= u_min_ && u <= u_max_)) return log_bessel_k(nu_, std::sqrt(x));
  const double t = (u - u_min_) * inverse_width_;
  const std::size_t i = std::min(static_cast<std::size_t>(t), pieces_ - 1);
  const double local = 2.0 * (t - static_cast<double>(i)) - 1.0;
  return clenshaw(coefficients_.data() + i * (kDegree + 1), kDegree, local);
}

namespace {

// Four doubles as one SIMD value (GCC and Clang vector extension: one AVX register, or two SSE2
// ones in the baseline clone).
using Lanes = double __attribute__((vector_size(4 * sizeof(double))));

// (Lanes travel by reference: passing them by value would change the baseline clone's ABI.)
inline void load_lanes(const double* p, Lanes& v) {
  std::memcpy(&v, p, sizeof v);
}

// Four rows (four consecutive coefficients of four pieces) as columns: column[i] holds
// coefficient i of each row, one per lane. Eight shuffles replace sixteen scalar loads and
// inserts: GCC has no cheap gather for a lane's coefficient and emulated one element at a time.
inline void transpose(const Lanes (&row)[4], Lanes (&column)[4]) {
  const Lanes even01 = __builtin_shufflevector(row[0], row[1], 0, 4, 2, 6);
  const Lanes odd01 = __builtin_shufflevector(row[0], row[1], 1, 5, 3, 7);
  const Lanes even23 = __builtin_shufflevector(row[2], row[3], 0, 4, 2, 6);
  const Lanes odd23 = __builtin_shufflevector(row[2], row[3], 1, 5, 3, 7);
  column[0] = __builtin_shufflevector(even01, even23, 0, 1, 4, 5);
  column[1] = __builtin_shufflevector(odd01, odd23, 0, 1, 4, 5);
  column[2] = __builtin_shufflevector(even01, even23, 2, 3, 6, 7);
  column[3] = __builtin_shufflevector(odd01, odd23, 2, 3, 6, 7);
}

// The body of LogBesselKFixedOrder::log_terms: log x, the piece and local coordinate of a chunk
// of arguments, then Clenshaw's recurrence for four arguments at a time as SIMD lanes, each
// lane's coefficients read as a row of its piece and transposed into lanes, four coefficients
// at a time; arguments outside [x_min, x_max] take log_bessel_k. Piece coefficients are
// kStride apart. Each lane performs clenshaw()'s operations in clenshaw()'s order, so the
// result does not depend on the lane width.
constexpr int kTermDegree = LogBesselKFixedOrder::kDegree;
constexpr std::size_t kStride = kTermDegree + 1;
static_assert(kTermDegree % 4 == 0, "coefficients 1..degree are read in blocks of four");

KINGMAN_VECTOR_CLONES
void fitted_log_terms(const double* coefficients, double nu, double x_min, double x_max,
                      double u_min, double inverse_width, std::size_t pieces, const double* x,
                      double power, double* out, std::size_t count) {
  constexpr std::size_t kChunk = 64, kLanes = 4;
  const double last_piece = static_cast<double>(pieces - 1);
  double u[kChunk], local[kChunk], b1[kChunk], b2[kChunk];
  std::int32_t piece[kChunk];  // coefficient offsets: under 13 * 1500 * 2^12 < 2^31
  for (std::size_t begin = 0; begin < count; begin += kChunk) {
    const std::size_t size = std::min(kChunk, count - begin);
    const std::size_t padded = (size + kLanes - 1) / kLanes * kLanes;
    for (std::size_t k = 0; k < padded; ++k) {
      // Lanes past the end repeat the first argument (their results are not stored).
      u[k] = detail::log_of_normal(x[begin + (k < size ? k : 0)]);
      const double t = std::clamp((u[k] - u_min) * inverse_width, 0.0, last_piece + 1.0);
      const double index = std::min(std::floor(t), last_piece);
      piece[k] = static_cast<std::int32_t>(index) * static_cast<std::int32_t>(kStride);
      local[k] = 2.0 * (t - index) - 1.0;
    }
    // Clenshaw's recurrence (as clenshaw() above) down to coefficient 1, four lanes at a time.
    for (std::size_t k = 0; k < padded; k += kLanes) {
      const double* row[kLanes];
      for (std::size_t l = 0; l < kLanes; ++l) row[l] = coefficients + piece[k + l];
      Lanes two_local;
      load_lanes(local + k, two_local);
      two_local *= 2.0;
      Lanes next = {0.0, 0.0, 0.0, 0.0}, after = next;  // b1 and b2
      for (int block = kTermDegree - 3; block >= 1; block -= 4) {
        Lanes rows[4], column[4];
        for (std::size_t l = 0; l < kLanes; ++l) load_lanes(row[l] + block, rows[l]);
        transpose(rows, column);
        for (int i = 3; i >= 0; --i) {
          const Lanes current = column[i] + two_local * next - after;
          after = next;
          next = current;
        }
      }
      std::memcpy(b1 + k, &next, sizeof next);
      std::memcpy(b2 + k, &after, sizeof after);
    }
    for (std::size_t k = 0; k < size; ++k) {
      // x is read before out is written at each index, so out may alias x.
      const double argument = x[begin + k];
      const double log_k = argument >= x_min && argument <= x_max
                               ? coefficients[piece[k]] + local[k] * b1[k] - b2[k]
                               : log_bessel_k(nu, std::sqrt(argument));
      out[begin + k] = power * u[k] + log_k;
    }
  }
}

}  // namespace

void LogBesselKFixedOrder::log_terms(const double* x, double power, double* out,
                                     std::size_t count) const {
  fitted_log_terms(coefficients_.data(), nu_, x_min_, x_max_, u_min_, inverse_width_, pieces_, x,
                   power, out, count);
}

}  // namespace kingman::kernels
