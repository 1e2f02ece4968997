#include "kingman/kernels/fixed_order_bessel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <stdexcept>

#include "kingman/kernels/log_bessel_k.hpp"
#include "simd_copies.hpp"
#include "vector_math_detail.hpp"

namespace kingman::kernels {

namespace {

double exact(double nu, double u) {
  return log_bessel_k(nu, std::exp(0.5 * u));
}

// The Chebyshev nodes of a degree and the cosines that turn values there into coefficients,
// computed once per fit (its pieces all use them: ~4500 cosines per fit otherwise).
struct ChebyshevTable {
  int degree;
  std::vector<double> node;   // cos(pi (k + 1/2) / nodes)
  std::vector<double> basis;  // [j * nodes + k] = cos(pi j (k + 1/2) / nodes)

  explicit ChebyshevTable(int degree_) : degree(degree_) {
    const int nodes = degree + 1;
    node.resize(nodes);
    basis.resize(static_cast<std::size_t>(nodes) * nodes);
    for (int k = 0; k < nodes; ++k) node[k] = std::cos(std::numbers::pi * (k + 0.5) / nodes);
    for (int j = 0; j <= degree; ++j)
      for (int k = 0; k < nodes; ++k)
        basis[static_cast<std::size_t>(j) * nodes + k] =
            std::cos(std::numbers::pi * j * (k + 0.5) / nodes);
  }
};

// Chebyshev coefficients of f on [a, b] from its values at the Chebyshev nodes.
void fit_piece(double nu, double a, double b, const ChebyshevTable& table, double* c) {
  const int nodes = table.degree + 1;
  std::vector<double> values(nodes);
  for (int k = 0; k < nodes; ++k)
    values[k] = exact(nu, 0.5 * (a + b) + 0.5 * (b - a) * table.node[k]);
  for (int j = 0; j <= table.degree; ++j) {
    double sum = 0.0;
    for (int k = 0; k < nodes; ++k)
      sum += values[k] * table.basis[static_cast<std::size_t>(j) * nodes + k];
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
  const ChebyshevTable table(kDegree);
  for (int attempt = 0;; ++attempt) {
    const double width = (u_max_ - u_min_) / static_cast<double>(pieces_);
    coefficients_.assign(pieces_ * kStride, 0.0);
    bool accurate = true;
    for (std::size_t i = 0; i < pieces_ && accurate; ++i) {
      const double a = u_min_ + width * static_cast<double>(i), b = a + width;
      double* c = coefficients_.data() + i * kStride;
      fit_piece(nu_, a, b, table, c);
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
  return clenshaw(coefficients_.data() + i * kStride, kDegree, local);
}

namespace {

// Four doubles as one SIMD value (GCC and Clang vector extension: one AVX register, or two SSE2
// ones in the baseline copy; simd_copies.hpp).
using Lanes = double __attribute__((vector_size(4 * sizeof(double))));

// (Lanes travel by reference: passing them by value would change the baseline copy's ABI.)
[[gnu::always_inline]] inline void load_lanes(const double* p, Lanes& v) {
  std::memcpy(&v, p, sizeof v);
}

// Four rows (four consecutive coefficients of four pieces) as columns: column[i] holds
// coefficient i of each row, one per lane. Eight shuffles replace sixteen scalar loads and
// inserts: GCC has no cheap gather for a lane's coefficient and emulated one element at a time.
[[gnu::always_inline]] inline void transpose(const Lanes (&row)[4], Lanes (&column)[4]) {
  const Lanes even01 = __builtin_shufflevector(row[0], row[1], 0, 4, 2, 6);
  const Lanes odd01 = __builtin_shufflevector(row[0], row[1], 1, 5, 3, 7);
  const Lanes even23 = __builtin_shufflevector(row[2], row[3], 0, 4, 2, 6);
  const Lanes odd23 = __builtin_shufflevector(row[2], row[3], 1, 5, 3, 7);
  column[0] = __builtin_shufflevector(even01, even23, 0, 1, 4, 5);
  column[1] = __builtin_shufflevector(odd01, odd23, 0, 1, 4, 5);
  column[2] = __builtin_shufflevector(even01, even23, 2, 3, 6, 7);
  column[3] = __builtin_shufflevector(odd01, odd23, 2, 3, 6, 7);
}

// The body of LogBesselKFixedOrder::log_terms, four arguments at a time as SIMD lanes: log x,
// the piece and local coordinate, then Clenshaw's recurrence with each lane's coefficients read
// as rows of its piece and transposed into lanes, four coefficients at a time. Pieces are kStride
// doubles apart, c_0 ... c_kDegree then zeros, so that c_0 comes with c_1 ... c_3 and the last
// step runs in the lanes too. Arguments outside [x_min, x_max] are clamped to a piece there
// and then replaced, one by one, by log_bessel_k (rare: the fit covers a run's distances).
// Each lane performs log_term()'s operations in its order, so the result does not depend on the
// SIMD copy that runs or on an argument's place in the batch. The pieces' recurrences advance
// one block of coefficients per pass over a chunk of groups (clenshaw_pass): each group's chain
// of dependent steps is long, and the groups' chains overlap only when interleaved so.
constexpr int kTermDegree = LogBesselKFixedOrder::kDegree;
constexpr std::size_t kStride = LogBesselKFixedOrder::kStride;
static_assert(kTermDegree == 12 && kStride == 16, "the blocks below read c_0 ... c_15");

// Lanes of 64-bit integers, for the exponent and mantissa bits of log x
// (detail::log_of_normal_into), and of 32-bit ones, for the lanes' pieces.
using Bits = std::uint64_t __attribute__((vector_size(4 * sizeof(std::uint64_t))));
using Piece = std::int32_t __attribute__((vector_size(4 * sizeof(std::int32_t))));

// (Helpers are always inlined, and return through references: a Lanes return value would
// change the baseline copy's ABI, and an out-of-line call would cost more than the helper.)
[[gnu::always_inline]] inline void set_lanes(double value, Lanes& v) {
  v = Lanes{value, value, value, value};
}

// Clenshaw's steps for coefficients c_{top} ... c_{top - 3} (column[3] ... column[0]).
[[gnu::always_inline]] inline void clenshaw_block(const Lanes (&column)[4], const Lanes& two_local,
                                                  Lanes& next, Lanes& after) {
#pragma GCC unroll 4
  for (int i = 3; i >= 0; --i) {
    const Lanes current = column[i] + two_local * next - after;
    after = next;
    next = current;
  }
}

// Steps c_{top} ... c_{top - 3} of Clenshaw's recurrence for every group of four lanes of a
// chunk, coefficients from rows `top - 3` of each lane's piece (offsets[4 g + l]). One block
// per pass over the chunk: the groups' recurrences are independent, so their chains of
// dependent multiply-add-subtract steps overlap instead of running one after another.
[[gnu::always_inline]] inline void clenshaw_pass(const double* coefficients,
                                                 const std::int32_t* offsets, int top,
                                                 std::size_t groups, const Lanes* two_local,
                                                 Lanes* next, Lanes* after) {
  for (std::size_t g = 0; g < groups; ++g) {
    Lanes rows[4], column[4];
#pragma GCC unroll 4
    for (std::size_t l = 0; l < 4; ++l)
      load_lanes(coefficients + offsets[4 * g + l] + (top - 3), rows[l]);
    transpose(rows, column);
    clenshaw_block(column, two_local[g], next[g], after[g]);
  }
}

struct FittedLogTermsKernel {
  template <std::size_t>
  [[gnu::always_inline]] static void run(const double* coefficients, double nu, double x_min,
                                         double x_max, double u_min, double inverse_width,
                                         std::size_t pieces, const double* x, double power,
                                         double* out, std::size_t count) {
    constexpr std::size_t kLanes = 4, kGroups = 16, kChunk = kLanes * kGroups;
    const double last_piece = static_cast<double>(pieces - 1);
    std::int32_t offset[kChunk];  // of each lane's piece: under kStride * 1500 * 2^12 < 2^31
    Lanes argument[kGroups], log_x[kGroups], local[kGroups], two_local[kGroups], next[kGroups],
        after[kGroups];
    for (std::size_t begin = 0; begin < count; begin += kChunk) {
      const std::size_t size = std::min(kChunk, count - begin);
      const std::size_t groups = (size + kLanes - 1) / kLanes;
      // x is read here, before out is written below, so out may alias x.
      for (std::size_t g = 0; g < groups; ++g) {
        const std::size_t first = begin + kLanes * g;
        if (first + kLanes <= count) {
          load_lanes(x + first, argument[g]);
        } else {
          // Lanes past the end repeat the group's first argument (their results are not stored).
          double padded[kLanes];
          for (std::size_t l = 0; l < kLanes; ++l)
            padded[l] = x[first + l < count ? first + l : first];
          load_lanes(padded, argument[g]);
        }
      }
      for (std::size_t g = 0; g < groups; ++g) {
        Lanes zero;
        set_lanes(0.0, zero);
        detail::log_of_normal_into<Lanes, Bits>(argument[g], log_x[g]);
        // std::clamp(t, 0, last_piece + 1), with NaN (never a distance) to 0 so that the row
        // read stays inside the table; such a lane is out of range and replaced below.
        Lanes t = (log_x[g] - u_min) * inverse_width;
        t = t >= 0.0 ? t : zero;
        t = t > last_piece + 1.0 ? zero + (last_piece + 1.0) : t;
        // std::min(std::floor(t), last_piece) in the lanes: t >= 0, so floor is truncation.
        const Piece whole = __builtin_convertvector(t, Piece);
        Lanes index = __builtin_convertvector(whole, Lanes);
        index = index < last_piece ? index : zero + last_piece;
        const Piece piece =
            __builtin_convertvector(index, Piece) * static_cast<std::int32_t>(kStride);
        std::memcpy(offset + kLanes * g, &piece, sizeof piece);
        local[g] = 2.0 * (t - index) - 1.0;
        two_local[g] = 2.0 * local[g];
      }
      for (std::size_t g = 0; g < groups; ++g) {
        // Clenshaw's first step, c_12 + 2x * 0 - 0, as clenshaw() takes it, then c_11 ... c_8.
        Lanes rows[4], column[4], zero;
        set_lanes(0.0, zero);
#pragma GCC unroll 4
        for (std::size_t l = 0; l < kLanes; ++l)
          load_lanes(coefficients + offset[kLanes * g + l] + 12, rows[l]);
        transpose(rows, column);
        next[g] = column[0] + two_local[g] * zero - zero;
        after[g] = zero;
#pragma GCC unroll 4
        for (std::size_t l = 0; l < kLanes; ++l)
          load_lanes(coefficients + offset[kLanes * g + l] + 8, rows[l]);
        transpose(rows, column);
        clenshaw_block(column, two_local[g], next[g], after[g]);
      }
      clenshaw_pass(coefficients, offset, 7, groups, two_local, next, after);
      for (std::size_t g = 0; g < groups; ++g) {
        Lanes rows[4], column[4];
#pragma GCC unroll 4
        for (std::size_t l = 0; l < kLanes; ++l)
          load_lanes(coefficients + offset[kLanes * g + l], rows[l]);
        transpose(rows, column);
        Lanes b1 = next[g], b2 = after[g];
#pragma GCC unroll 4
        for (int i = 3; i >= 1; --i) {
          const Lanes current = column[i] + two_local[g] * b1 - b2;
          b2 = b1;
          b1 = current;
        }
        Lanes terms = power * log_x[g] + (column[0] + local[g] * b1 - b2);
        const auto inside = (argument[g] >= x_min) & (argument[g] <= x_max);
        const std::size_t first = begin + kLanes * g;
        const std::size_t lanes = std::min(kLanes, count - first);
        if (!(inside[0] & inside[1] & inside[2] & inside[3])) {
          // Out of the fitted range (rare: the fit covers a run's distances): log_bessel_k.
          for (std::size_t l = 0; l < lanes; ++l)
            if (!inside[l])
              terms[l] = power * log_x[g][l] + log_bessel_k(nu, std::sqrt(argument[g][l]));
        }
        if (lanes == kLanes) {
          std::memcpy(out + first, &terms, sizeof terms);
        } else {
          for (std::size_t l = 0; l < lanes; ++l) out[first + l] = terms[l];
        }
      }
    }
  }
};

void fitted_log_terms(const double* coefficients, double nu, double x_min, double x_max,
                      double u_min, double inverse_width, std::size_t pieces, const double* x,
                      double power, double* out, std::size_t count) {
  detail::run_in_copy<FittedLogTermsKernel>(coefficients, nu, x_min, x_max, u_min, inverse_width,
                                            pieces, x, power, out, count);
}

}  // namespace

double LogBesselKFixedOrder::log_term(double x, double power) const {
  const double log_x = detail::log_of_normal(x);
  if (!(x >= x_min_ && x <= x_max_)) return power * log_x + log_bessel_k(nu_, std::sqrt(x));
  const double t = std::clamp((log_x - u_min_) * inverse_width_, 0.0, static_cast<double>(pieces_));
  const double index = std::min(std::floor(t), static_cast<double>(pieces_ - 1));
  const double local = 2.0 * (t - index) - 1.0;
  return power * log_x +
         clenshaw(coefficients_.data() + static_cast<std::size_t>(index) * kStride, kDegree, local);
}

void LogBesselKFixedOrder::log_terms(const double* x, double power, double* out,
                                     std::size_t count) const {
  fitted_log_terms(coefficients_.data(), nu_, x_min_, x_max_, u_min_, inverse_width_, pieces_, x,
                   power, out, count);
}

}  // namespace kingman::kernels
