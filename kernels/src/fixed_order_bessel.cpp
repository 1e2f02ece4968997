#include "kingman/kernels/fixed_order_bessel.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <span>
#include <stdexcept>

#include "kingman/kernels/log_bessel_k.hpp"
#include "simd_copies.hpp"

namespace kingman::kernels {

namespace {

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
template <typename Function>
void fit_piece(const Function& f, double a, double b, const ChebyshevTable& table, double* c) {
  const int nodes = table.degree + 1;
  double values[16];
  for (int k = 0; k < nodes; ++k) values[k] = f(0.5 * (a + b) + 0.5 * (b - a) * table.node[k]);
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

double from_bits(std::uint64_t bits) {
  return std::bit_cast<double>(bits);
}

// Whether pass(i) holds for every i < count, with the indices run through `loop` (serially
// where it is empty). Indices are independent, so a loop may run them on several threads at
// once; once one fails the rest are skipped (the caller discards the attempt), so the answer,
// and every value kept from an attempt that passes, is the same whatever the loop.
template <typename Pass>
bool all_pass(std::size_t count, std::size_t work_per_index, const Pass& pass,
              const LogBesselKFixedOrder::RangeLoop& loop) {
  if (!loop) {
    for (std::size_t i = 0; i < count; ++i)
      if (!pass(i)) return false;
    return true;
  }
  std::atomic<bool> passed{true};
  loop(count, work_per_index, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end && passed.load(std::memory_order_relaxed); ++i)
      if (!pass(i)) passed.store(false, std::memory_order_relaxed);
  });
  return passed.load();
}

// The reference fit: log K_nu(sqrt(x)) piecewise Chebyshev of degree 12 in u = log x, on pieces
// cut from the bits of x like the final fit's with 2^j_ref pieces per binade (j_ref = 0: whole
// binades, u-width ln 2), j_ref raised until every piece matches log_bessel_k to 1e-13 relative
// at test points between its nodes and at its ends. The final pieces (j >= j_ref) then lie each
// inside one reference piece, where the reference is one polynomial: a piece straddling two
// would meet the jump between their errors, up to 2e-13, and no final fit could match both sides.
class ReferenceFit {
 public:
  static constexpr int kDegree = 12;
  // Rough arithmetic cost of fitting and checking one piece: 27 calls of log_bessel_k.
  static constexpr std::size_t kWorkPerPiece = 10000;
  static constexpr int kMostPieceBits = 8;

  // Covers the pieces of x_min ... x_max (positive normal numbers), fitted through `loop`.
  ReferenceFit(double nu, double x_min, double x_max, const LogBesselKFixedOrder::RangeLoop& loop) {
    const ChebyshevTable table(kDegree);
    auto exact = [nu](double u) { return log_bessel_k(nu, std::exp(0.5 * u)); };
    for (int bits = 0;; ++bits) {
      shift_ = 52 - bits;
      first_ = std::bit_cast<std::uint64_t>(x_min) >> shift_;
      pieces_ = (std::bit_cast<std::uint64_t>(x_max) >> shift_) - first_ + 1;
      coefficients_.assign(pieces_ * kStride, 0.0);
      // Whether piece i passes (fitted into its own coefficients, so pieces may run at once).
      auto fit = [&](std::size_t i) {
        const double a = std::log(from_bits((first_ + i) << shift_));
        const double b = std::log(from_bits((first_ + i + 1) << shift_));
        double* c = coefficients_.data() + i * kStride;
        fit_piece(exact, a, b, table, c);
        c[kDegree + 1] = a;
        c[kDegree + 2] = 2.0 / (b - a);
        // Checked at the ends and between consecutive nodes, where interpolation error peaks.
        for (int k = -1; k < kDegree + 1; ++k) {
          const double x = k < 0          ? -1.0
                           : k == kDegree ? 1.0
                                          : 0.5 * (table.node[k] + table.node[k + 1]);
          const double want = exact(0.5 * (a + b) + 0.5 * (b - a) * x);
          if (!(std::abs(clenshaw(c, kDegree, x) - want) <= 1e-13 * std::max(1.0, std::abs(want))))
            return false;
        }
        return true;
      };
      const bool accurate = all_pass(pieces_, kWorkPerPiece, fit, loop);
      if (accurate) break;
      if (bits == kMostPieceBits)
        throw std::runtime_error("LogBesselKFixedOrder: fit did not converge");
    }
  }

  // log K_nu(sqrt(x)) for x inside the covered pieces or at the last one's end, given log x.
  double operator()(double x, double log_x) const {
    const std::size_t piece =
        std::min(static_cast<std::size_t>((std::bit_cast<std::uint64_t>(x) >> shift_) - first_),
                 pieces_ - 1);
    const double* c = coefficients_.data() + piece * kStride;
    const double local = std::clamp((log_x - c[kDegree + 1]) * c[kDegree + 2] - 1.0, -1.0, 1.0);
    return clenshaw(c, kDegree, local);
  }

  int piece_bits() const { return 52 - shift_; }

 private:
  // c_0 ... c_12, then the piece's u at its start and 2 / its u-width.
  static constexpr std::size_t kStride = kDegree + 3;
  int shift_;
  std::uint64_t first_;
  std::size_t pieces_;
  std::vector<double> coefficients_;
};

// The local coordinate in [-1, 1) of x in its piece: its mantissa bits below the piece's, as
// the mantissa of y in [1, 2), then 2y - 3 (exact).
inline double local_coordinate(std::uint64_t bits, int shift) {
  const std::uint64_t mantissa = ((bits << (52 - shift)) & std::uint64_t{0x000fffffffffffff}) |
                                 std::uint64_t{0x3ff0000000000000};
  return 2.0 * from_bits(mantissa) - 3.0;
}

double outside_term(double nu, double power, double x) {
  return power * std::log(x) + log_bessel_k(nu, std::sqrt(x));
}

}  // namespace

LogBesselKFixedOrder::LogBesselKFixedOrder(double nu, double x_min, double x_max, double power,
                                           const RangeLoop& loop)
    : nu_(nu), power_(power) {
  if (!(x_min > 0.0) || !(x_max > x_min) || !std::isfinite(x_max) ||
      !(x_max < std::numeric_limits<double>::max() / 2)) {
    throw std::domain_error("LogBesselKFixedOrder: need 0 < x_min < x_max < DBL_MAX / 2");
  }
  // Below the smallest normal number the bits are not x's exponent and mantissa: such
  // arguments take log_bessel_k.
  x_min_ = std::max(x_min, std::numeric_limits<double>::min());
  x_max_ = x_max;
  if (!(x_max_ > x_min_)) throw std::domain_error("LogBesselKFixedOrder: x_max too small");
  const ReferenceFit reference(nu, x_min_, x_max_, loop);
  auto want = [&](double x, double& scale) {
    const double log_x = std::log(x);
    const double log_k = reference(x, log_x);
    scale = std::max({1.0, std::abs(log_k), std::abs(power * log_x)});
    return power * log_x + log_k;
  };
  const ChebyshevTable table(kDegree);
  // Rough arithmetic cost of a piece: 8 values and 4 checks from the reference, or a probe's 8
  // values and 14 checks.
  constexpr std::size_t kWorkPerPiece = 1500, kWorkPerProbe = 2500;
  // Checked at the ends and between consecutive nodes, where the interpolation error peaks;
  // the first four are the ends and the outermost gaps, where it is largest.
  double checks[kDegree + 2] = {-1.0, 1.0, 0.5 * (table.node[0] + table.node[1]),
                                0.5 * (table.node[kDegree - 1] + table.node[kDegree])};
  for (int k = 1; k < kDegree - 1; ++k) checks[k + 3] = 0.5 * (table.node[k] + table.node[k + 1]);
  // Fits piece i for the current j into c; whether it passes at the first `check_count` checks.
  auto fit = [&](std::size_t i, double* c, std::size_t check_count) {
    const double a = from_bits((first_ + i) << shift_), b = from_bits((first_ + i + 1) << shift_);
    double unused;
    fit_piece([&](double x) { return want(x, unused); }, a, b, table, c);
    for (const double local : std::span(checks, check_count)) {
      double scale;
      const double value = want(0.5 * (a + b) + 0.5 * (b - a) * local, scale);
      if (!(std::abs(clenshaw(c, kDegree, local) - value) <= 5e-14 * (scale + 1.0))) return false;
    }
    return true;
  };
  for (int bits = std::max(2, reference.piece_bits());; ++bits) {
    shift_ = 52 - bits;
    first_ = std::bit_cast<std::uint64_t>(x_min_) >> shift_;
    pieces_ = (std::bit_cast<std::uint64_t>(x_max_) >> shift_) - first_ + 1;
    coefficients_.assign(pieces_ * kStride, 0.0);
    // A binade's first piece spans the largest part of its distance from 0 (the hardest): a
    // probe of those, at every check, rejects a j that would fail before every piece is fitted;
    // then every other piece is checked where its error peaks (half the cost of the fit
    // otherwise).
    const std::size_t per_binade = std::size_t{1} << bits;
    const std::size_t first_probe = (per_binade - (first_ & (per_binade - 1))) % per_binade;
    const std::size_t probes =
        first_probe < pieces_ ? (pieces_ - first_probe + per_binade - 1) / per_binade : 0;
    const bool accurate =
        all_pass(
            probes, kWorkPerProbe,
            [&](std::size_t k) {
              const std::size_t i = first_probe + k * per_binade;
              return fit(i, coefficients_.data() + i * kStride, std::size(checks));
            },
            loop) &&
        all_pass(
            pieces_, kWorkPerPiece,
            [&](std::size_t i) {
              // The probes are fitted and passed every check already.
              const bool probe = i >= first_probe && (i - first_probe) % per_binade == 0;
              return probe || fit(i, coefficients_.data() + i * kStride, 4);
            },
            loop);
    if (accurate) break;
    if (bits == kMostPieceBits)
      throw std::runtime_error("LogBesselKFixedOrder: fit did not converge");
  }
}

double LogBesselKFixedOrder::term(double x) const {
  if (!(x >= x_min_ && x <= x_max_)) return outside_term(nu_, power_, x);
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const std::size_t piece = static_cast<std::size_t>((bits >> shift_) - first_);
  return clenshaw(coefficients_.data() + piece * kStride, kDegree, local_coordinate(bits, shift_));
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

// The body of LogBesselKFixedOrder::terms, four arguments at a time as SIMD lanes: each lane's
// piece and local coordinate from its bits, then Clenshaw's recurrence with each lane's
// coefficients read as rows of its piece and transposed into lanes, four coefficients at a time
// (c_4 ... c_7, then c_0 ... c_3). Arguments outside [x_min, x_max] are clamped to a piece and
// then replaced, one by one, by log_bessel_k (rare: the fit covers a run's distances). Each lane
// performs term()'s operations in its order, so the result does not depend on the SIMD copy
// that runs or on an argument's place in the batch. The pieces' recurrences advance one block
// of coefficients per pass over a chunk of groups: each group's chain of dependent steps is
// long, and the groups' chains overlap only when interleaved so.
constexpr int kTermDegree = LogBesselKFixedOrder::kDegree;
constexpr std::size_t kStride = LogBesselKFixedOrder::kStride;
static_assert(kTermDegree == 7 && kStride == 8, "the blocks below read c_0 ... c_7");

// Lanes of 64-bit integers (the arguments' bits and pieces), and of 32-bit ones (the pieces'
// offsets in the table).
using Bits = std::uint64_t __attribute__((vector_size(4 * sizeof(std::uint64_t))));
using SignedBits = std::int64_t __attribute__((vector_size(4 * sizeof(std::int64_t))));
using Piece = std::int32_t __attribute__((vector_size(4 * sizeof(std::int32_t))));

// (Helpers are always inlined, and return through references: a Lanes return value would
// change the baseline copy's ABI, and an out-of-line call would cost more than the helper.)
[[gnu::always_inline]] inline void set_lanes(double value, Lanes& v) {
  v = Lanes{value, value, value, value};
}

struct FittedTermsKernel {
  template <std::size_t>
  [[gnu::always_inline]] static void run(const double* coefficients, double nu, double power,
                                         double x_min, double x_max, int shift, std::uint64_t first,
                                         std::size_t pieces, const double* x, double* out,
                                         std::size_t count) {
    constexpr std::size_t kLanes = 4, kGroups = 16, kChunk = kLanes * kGroups;
    const std::int64_t last_piece = static_cast<std::int64_t>(pieces - 1);
    // Each lane's piece's offset: pieces < 2^(kMostPieceBits + 11), times kStride, < 2^31.
    std::int32_t offset[kChunk];
    Lanes argument[kGroups], local[kGroups], two_local[kGroups], next[kGroups], after[kGroups];
    for (std::size_t begin = 0; begin < count; begin += kChunk) {
      const std::size_t size = std::min(kChunk, count - begin);
      const std::size_t groups = (size + kLanes - 1) / kLanes;
      // x is read here, before out is written below, so out may alias x.
      for (std::size_t g = 0; g < groups; ++g) {
        const std::size_t first_lane = begin + kLanes * g;
        if (first_lane + kLanes <= count) {
          load_lanes(x + first_lane, argument[g]);
        } else {
          // Lanes past the end repeat the group's first argument (their results are not stored).
          double padded[kLanes];
          for (std::size_t l = 0; l < kLanes; ++l)
            padded[l] = x[first_lane + l < count ? first_lane + l : first_lane];
          load_lanes(padded, argument[g]);
        }
      }
      for (std::size_t g = 0; g < groups; ++g) {
        Bits bits;
        std::memcpy(&bits, &argument[g], sizeof bits);
        // The piece, clamped into the table for arguments outside the range (replaced below).
        SignedBits piece = reinterpret_cast<SignedBits>((bits >> shift) - first);
        piece = piece < 0 ? SignedBits{} : piece;
        piece = piece > last_piece ? SignedBits{} + last_piece : piece;
        const Piece row =
            __builtin_convertvector(piece, Piece) * static_cast<std::int32_t>(kStride);
        std::memcpy(offset + kLanes * g, &row, sizeof row);
        // local_coordinate() in the lanes.
        const Bits mantissa = ((bits << (52 - shift)) & std::uint64_t{0x000fffffffffffff}) |
                              std::uint64_t{0x3ff0000000000000};
        Lanes y;
        std::memcpy(&y, &mantissa, sizeof y);
        local[g] = 2.0 * y - 3.0;
        two_local[g] = 2.0 * local[g];
      }
      for (std::size_t g = 0; g < groups; ++g) {
        // Clenshaw's first step, c_7 + 2x * 0 - 0, as clenshaw() takes it, then c_6 ... c_4.
        Lanes rows[4], column[4], zero;
        set_lanes(0.0, zero);
#pragma GCC unroll 4
        for (std::size_t l = 0; l < kLanes; ++l)
          load_lanes(coefficients + offset[kLanes * g + l] + 4, rows[l]);
        transpose(rows, column);
        Lanes b1 = column[3] + two_local[g] * zero - zero, b2 = zero;
#pragma GCC unroll 3
        for (int i = 2; i >= 0; --i) {
          const Lanes current = column[i] + two_local[g] * b1 - b2;
          b2 = b1;
          b1 = current;
        }
        next[g] = b1;
        after[g] = b2;
      }
      for (std::size_t g = 0; g < groups; ++g) {
        Lanes rows[4], column[4];
#pragma GCC unroll 4
        for (std::size_t l = 0; l < kLanes; ++l)
          load_lanes(coefficients + offset[kLanes * g + l], rows[l]);
        transpose(rows, column);
        Lanes b1 = next[g], b2 = after[g];
#pragma GCC unroll 3
        for (int i = 3; i >= 1; --i) {
          const Lanes current = column[i] + two_local[g] * b1 - b2;
          b2 = b1;
          b1 = current;
        }
        Lanes terms = column[0] + local[g] * b1 - b2;
        const auto inside = (argument[g] >= x_min) & (argument[g] <= x_max);
        const std::size_t first_lane = begin + kLanes * g;
        const std::size_t lanes = std::min(kLanes, count - first_lane);
        if (!(inside[0] & inside[1] & inside[2] & inside[3])) {
          // Out of the fitted range (rare: the fit covers a run's distances): log_bessel_k.
          for (std::size_t l = 0; l < lanes; ++l)
            if (!inside[l]) terms[l] = outside_term(nu, power, argument[g][l]);
        }
        if (lanes == kLanes) {
          std::memcpy(out + first_lane, &terms, sizeof terms);
        } else {
          for (std::size_t l = 0; l < lanes; ++l) out[first_lane + l] = terms[l];
        }
      }
    }
  }
};

}  // namespace

void LogBesselKFixedOrder::terms(const double* x, double* out, std::size_t count) const {
  detail::run_in_copy<FittedTermsKernel>(coefficients_.data(), nu_, power_, x_min_, x_max_, shift_,
                                         first_, pieces_, x, out, count);
}

}  // namespace kingman::kernels
