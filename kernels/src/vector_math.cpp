#include "kingman/kernels/vector_math.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "simd_copies.hpp"
#include "simd_lanes.hpp"
#include "vector_math_detail.hpp"

namespace kingman::kernels {

namespace {

// out[i] = value(x[i]) for i < count (out may be x), in SIMD blocks: the whole blocks of eight,
// then the last, partial block through a copy padded with `pad`, so that it runs the same vector
// code rather than a scalar remainder loop, which costs about as much per element as the vector
// loop per block (MPost2 calls these on rows of a few dozen). The lanes perform the same
// operations as scalar code would, so the values are the same bits either way.
template <typename Value>
[[gnu::always_inline]] inline void in_blocks(const double* x, double* out, std::size_t count,
                                             double pad, const Value& value) {
  constexpr std::size_t kBlock = 8;
  const std::size_t whole = count / kBlock * kBlock;
  for (std::size_t i = 0; i < whole; ++i) out[i] = value(x[i]);
  if (whole == count) return;
  double in[kBlock], result[kBlock];
  for (std::size_t k = 0; k < kBlock; ++k) in[k] = whole + k < count ? x[whole + k] : pad;
  for (std::size_t k = 0; k < kBlock; ++k) result[k] = value(in[k]);
  for (std::size_t k = 0; whole + k < count; ++k) out[whole + k] = result[k];
}

struct LogArrayKernel {
  template <std::size_t>
  [[gnu::always_inline]] static void run(const double* x, double* out, std::size_t count) {
    in_blocks(
        x, out, count, 1.0,
        [](double v) __attribute__((always_inline)) { return detail::log_of_normal(v); });
  }
};
struct ExpArrayKernel {
  template <std::size_t>
  [[gnu::always_inline]] static void run(const double* x, double* out, std::size_t count) {
    in_blocks(
        x, out, count, 0.0,
        [](double v) __attribute__((always_inline)) { return detail::exp_or_zero(v); });
  }
};
struct ExpWithComplementArrayKernel {
  template <std::size_t>
  [[gnu::always_inline]] static void run(const double* y, double* e, double* complement,
                                         std::size_t count) {
    // y = k ln 2 + r, |r| <= ln(2) / 2: e^y = 2^k (1 + expm1 r), and 1 - e^y = (1 - 2^k) - 2^k
    // expm1 r, both without cancellation (k <= 0). A plain loop over the elements: each output
    // is a pure function of its own input, so the lanes get the scalar's bits.
    for (std::size_t i = 0; i < count; ++i) {
      const double value = std::min(std::max(y[i], -708.0), 0.0);
      const double shifted = value * detail::kLog2E + detail::kRoundingShift;
      const double k = shifted - detail::kRoundingShift;
      const double r = (value - k * detail::kLn2High) - k * detail::kLn2Low;
      double even, odd;
      detail::expm1_series_parts(r, even, odd);
      const std::uint64_t k_bits = std::bit_cast<std::uint64_t>(shifted) -
                                   std::bit_cast<std::uint64_t>(detail::kRoundingShift);
      const double scale = std::bit_cast<double>((k_bits + 1023) << 52);
      const double expm1_r = odd + even;
      e[i] = scale * (1.0 + expm1_r);
      complement[i] = (1.0 - scale) - scale * expm1_r;
    }
  }
};
struct SqrtArrayKernel {
  template <std::size_t>
  [[gnu::always_inline]] static void run(const double* x, double* out, std::size_t count) {
    in_blocks(
        x, out, count, 1.0, [](double v) __attribute__((always_inline)) { return std::sqrt(v); });
  }
};
struct MaxArrayKernel {
  template <std::size_t>
  [[gnu::always_inline]] static double run(const double* x, std::size_t count) {
    // Four running maxima (independent chains, SIMD lanes), joined at the end. The maximum does
    // not depend on the order, so every split gives the same value.
    constexpr std::size_t kLanes = 4;
    constexpr double kNone = -std::numeric_limits<double>::infinity();
    double lane[kLanes] = {kNone, kNone, kNone, kNone};
    std::size_t i = 0;
    for (; i + kLanes <= count; i += kLanes)
      for (std::size_t l = 0; l < kLanes; ++l) lane[l] = x[i + l] > lane[l] ? x[i + l] : lane[l];
    for (; i < count; ++i) lane[0] = x[i] > lane[0] ? x[i] : lane[0];
    const double low = lane[0] > lane[1] ? lane[0] : lane[1];
    const double high = lane[2] > lane[3] ? lane[2] : lane[3];
    return low > high ? low : high;
  }
};
// The first minimum below `bound`; with `nan` non-null, also whether any entry is NaN, in the
// same pass (the tests or-ed lane by lane beside the minima).
template <bool kCheckNan>
[[gnu::always_inline]] inline std::size_t first_minimum_below_in_lanes(const double* x,
                                                                       std::size_t count,
                                                                       double bound, bool* nan) {
  // Eight running minima (independent chains, SIMD lanes), joined; a NaN never replaces one.
  constexpr std::size_t kLanes = 8;
  double lane[kLanes];
  bool unordered[kLanes] = {};
  for (double& least : lane) least = bound;
  std::size_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    for (std::size_t l = 0; l < kLanes; ++l) {
      lane[l] = x[i + l] < lane[l] ? x[i + l] : lane[l];
      if constexpr (kCheckNan) unordered[l] |= x[i + l] != x[i + l];
    }
  }
  for (; i < count; ++i) {
    lane[0] = x[i] < lane[0] ? x[i] : lane[0];
    if constexpr (kCheckNan) unordered[0] |= x[i] != x[i];
  }
  if constexpr (kCheckNan) {
    bool any = false;
    for (const bool u : unordered) any |= u;
    *nan = any;
  }
  double least = bound;
  for (const double value : lane) least = value < least ? value : least;
  if (!(least < bound)) return count;
  std::size_t k = 0;
  while (!(x[k] == least)) ++k;  // there is one: `least` is an entry's value
  return k;
}

struct FirstMinimumBelowKernel {
  template <std::size_t>
  [[gnu::always_inline]] static std::size_t run(const double* x, std::size_t count, double bound) {
    return first_minimum_below_in_lanes<false>(x, count, bound, nullptr);
  }
};
struct FirstMinimumBelowCheckingNanKernel {
  template <std::size_t>
  [[gnu::always_inline]] static std::size_t run(const double* x, std::size_t count, double bound,
                                                bool* nan) {
    return first_minimum_below_in_lanes<true>(x, count, bound, nan);
  }
};
struct FirstAtMostKernel {
  template <std::size_t>
  [[gnu::always_inline]] static std::size_t run(const double* x, std::size_t count, double bound) {
    // Whole blocks of eight by one test each (the comparisons' lanes or-ed), then the block
    // that holds the entry, and a partial last block, one entry at a time.
    constexpr std::size_t kBlock = 8;
    std::size_t i = 0;
    for (; i + kBlock <= count; i += kBlock) {
      bool any = false;
      for (std::size_t l = 0; l < kBlock; ++l) any |= x[i + l] <= bound;
      if (any) break;
    }
    for (; i < count; ++i)
      if (x[i] <= bound) return i;
    return count;
  }
};
struct FirstNanKernel {
  template <std::size_t>
  [[gnu::always_inline]] static std::size_t run(const double* x, std::size_t count) {
    // As FirstAtMostKernel: whole blocks by one test each (x != x only for NaN).
    constexpr std::size_t kBlock = 8;
    std::size_t i = 0;
    for (; i + kBlock <= count; i += kBlock) {
      bool any = false;
      for (std::size_t l = 0; l < kBlock; ++l) any |= x[i + l] != x[i + l];
      if (any) break;
    }
    for (; i < count; ++i)
      if (x[i] != x[i]) return i;
    return count;
  }
};
struct WeightedSumKernel {
  template <std::size_t>
  [[gnu::always_inline]] static void run(double wa, const double* a, double wb, const double* b,
                                         double* out, std::size_t count) {
    // Restrict-qualified so that the loop vectorizes without overlap checks.
    const double* __restrict from_a = a;
    const double* __restrict from_b = b;
    double* __restrict to = out;
    for (std::size_t i = 0; i < count; ++i) to[i] = wa * from_a[i] + wb * from_b[i];
  }
};

struct MultiplyAffineFactorsKernel {
  template <std::size_t W>
  [[gnu::always_inline]] static void run(double* product, const double* a, const double* b,
                                         std::size_t size, const double* c, std::size_t count) {
    using Eight = simd::Lanes<8, W>;
    // Sixteen lanes at a time where there are: two independent chains of multiplications, so
    // that one's latency overlaps the other's.
    std::size_t i = 0;
    for (; i + 16 <= size; i += 16) {
      Eight first = Eight::load(product + i), second = Eight::load(product + i + 8);
      const Eight a_first = Eight::load(a + i), a_second = Eight::load(a + i + 8);
      const Eight b_first = Eight::load(b + i), b_second = Eight::load(b + i + 8);
      for (std::size_t k = 0; k < count; ++k) {
        first *= a_first + b_first * c[k];
        second *= a_second + b_second * c[k];
      }
      first.store(product + i);
      second.store(product + i + 8);
    }
    for (; i < size; i += 8) {
      Eight lanes = Eight::load(product + i);
      const Eight a_lanes = Eight::load(a + i), b_lanes = Eight::load(b + i);
      for (std::size_t k = 0; k < count; ++k) lanes *= a_lanes + b_lanes * c[k];
      lanes.store(product + i);
    }
  }
};

struct BinaryOverlapsKernel {
  template <std::size_t W>
  [[gnu::always_inline]] static void run(const double* q, const double* l, const double* r,
                                         double* out, std::size_t columns) {
    using Eight = simd::Lanes<8, W>;
    // Eight columns (sixteen values) at a time: each value's product in its lane, then the
    // columns' two values summed across neighbouring lanes.
    auto eight_columns = [](const double* q16, const double* l16, const double* r16, double* out8)
        __attribute__((always_inline)) {
      const Eight low = Eight::load(q16) * Eight::load(l16) * Eight::load(r16);
      const Eight high = Eight::load(q16 + 8) * Eight::load(l16 + 8) * Eight::load(r16 + 8);
      simd::pair_sums(low, high).store(out8);
    };
    std::size_t j = 0;
    for (; j + 8 <= columns; j += 8) eight_columns(q + 2 * j, l + 2 * j, r + 2 * j, out + j);
    if (j == columns) return;
    // The last columns through copies padded with zeros: the same vector code, no scalar loop.
    double q16[16], l16[16], r16[16], out8[8];
    for (std::size_t k = 0; k < 16; ++k) {
      const bool inside = 2 * j + k < 2 * columns;
      q16[k] = inside ? q[2 * j + k] : 0.0;
      l16[k] = inside ? l[2 * j + k] : 0.0;
      r16[k] = inside ? r[2 * j + k] : 0.0;
    }
    eight_columns(q16, l16, r16, out8);
    for (std::size_t k = 0; j + k < columns; ++k) out[j + k] = out8[k];
  }
};

}  // namespace

void log_array(const double* x, double* out, std::size_t count) {
  detail::run_in_copy<LogArrayKernel>(x, out, count);
}

void exp_array(const double* x, double* out, std::size_t count) {
  detail::run_in_copy<ExpArrayKernel>(x, out, count);
}

void exp_with_complement_array(const double* y, double* e, double* complement, std::size_t count) {
  detail::run_in_copy<ExpWithComplementArrayKernel>(y, e, complement, count);
}

void sqrt_array(const double* x, double* out, std::size_t count) {
  detail::run_in_copy<SqrtArrayKernel>(x, out, count);
}

double max_array(const double* x, std::size_t count) {
  return detail::run_in_copy<MaxArrayKernel>(x, count);
}

std::size_t first_minimum_below(const double* x, std::size_t count, double bound) {
  return detail::run_in_copy<FirstMinimumBelowKernel>(x, count, bound);
}

std::size_t first_minimum_below(const double* x, std::size_t count, double bound, bool& has_nan) {
  return detail::run_in_copy<FirstMinimumBelowCheckingNanKernel>(x, count, bound, &has_nan);
}

std::size_t first_at_most(const double* x, std::size_t count, double bound) {
  return detail::run_in_copy<FirstAtMostKernel>(x, count, bound);
}

std::size_t first_nan(const double* x, std::size_t count) {
  return detail::run_in_copy<FirstNanKernel>(x, count);
}

void weighted_sum(double wa, const double* a, double wb, const double* b, double* out,
                  std::size_t count) {
  detail::run_in_copy<WeightedSumKernel>(wa, a, wb, b, out, count);
}

void multiply_affine_factors(double* product, const double* a, const double* b, std::size_t size,
                             const double* c, std::size_t count) {
  detail::run_in_copy<MultiplyAffineFactorsKernel>(product, a, b, size, c, count);
}

void binary_overlaps(const double* q, const double* l, const double* r, double* out,
                     std::size_t columns) {
  detail::run_in_copy<BinaryOverlapsKernel>(q, l, r, out, columns);
}

}  // namespace kingman::kernels
