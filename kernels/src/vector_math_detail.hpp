#pragma once
// The element-wise bodies of log_array and exp_array (vector_math.hpp), inline so that other
// array kernels (the batched Bessel terms) vectorize them inside their own loops. Branch-free:
// selects only, which GCC if-converts when compiled with -fno-trapping-math (kernels/CMakeLists).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

namespace kingman::kernels::detail {

// ln 2 split so that k * kLn2High is exact for |k| < 2^11: high part with 42 significant bits.
inline constexpr double kLn2High = 0x1.62e42fefa3800p-1;
inline constexpr double kLn2Low = 0x1.ef35793c76730p-45;
inline constexpr double kLog2E = 0x1.71547652b82fep+0;
inline constexpr double kSqrt2 = 0x1.6a09e667f3bcdp+0;
// Adding this rounds a double of magnitude < 2^51 to an integer, held in the low mantissa bits.
inline constexpr double kRoundingShift = 0x1.8p52;

// Taylor series of exp(r) to r^13 / 13! for |r| <= ln(2) / 2, by Estrin's scheme (pairs of
// terms, then pairs of pairs): a dependency chain of depth ~8 instead of Horner's 26, which is
// what bounds a vectorized loop's speed. The first term left out is below 5e-18.
inline double exp_series(double r) {
  const double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
  const double p01 = 1.0 + r, p23 = 0.5 + r * (1.0 / 6.0);
  const double p45 = 1.0 / 24.0 + r * (1.0 / 120.0), p67 = 1.0 / 720.0 + r * (1.0 / 5040.0);
  const double p89 = 1.0 / 40320.0 + r * (1.0 / 362880.0);
  const double p1011 = 1.0 / 3628800.0 + r * (1.0 / 39916800.0);
  const double p1213 = 1.0 / 479001600.0 + r * (1.0 / 6227020800.0);
  return ((p01 + r2 * p23) + r4 * (p45 + r2 * p67)) + r8 * ((p89 + r2 * p1011) + r4 * p1213);
}

// The even and odd parts of expm1(r)'s Taylor series to r^13: cosh r - 1 and sinh r, by
// Estrin's scheme in r^2.
inline void expm1_series_parts(double r, double& even, double& odd) {
  const double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
  // cosh r - 1 = r^2 (1/2! + r^2/4! + ... + r^10/12!)
  const double e01 = 0.5 + r2 * (1.0 / 24.0), e23 = 1.0 / 720.0 + r2 * (1.0 / 40320.0);
  const double e45 = 1.0 / 3628800.0 + r2 * (1.0 / 479001600.0);
  even = r2 * ((e01 + r4 * e23) + r8 * e45);
  // sinh r = r + r^3 (1/3! + r^2/5! + ... + r^10/13!)
  const double o01 = 1.0 / 6.0 + r2 * (1.0 / 120.0), o23 = 1.0 / 5040.0 + r2 * (1.0 / 362880.0);
  const double o45 = 1.0 / 39916800.0 + r2 * (1.0 / 6227020800.0);
  odd = r + (r * r2) * ((o01 + r4 * o23) + r8 * o45);
}

// log x for positive normal x, into log_x, for a double (Bits = std::uint64_t) or a GCC vector
// of doubles (Bits the vector of as many std::uint64_t): the same operations either way, so
// each lane of a vector gets the scalar's bits. (Always inlined, and out through a reference: a
// vector return value would change the baseline SIMD copy's ABI.)
template <typename Real, typename Bits>
[[gnu::always_inline]] inline void log_of_normal_into(const Real& x, Real& log_x) {
  static_assert(sizeof(Real) == sizeof(Bits));
  Bits bits;
  std::memcpy(&bits, &x, sizeof bits);
  // x = 2^e m with m in [1, 2); the biased exponent becomes a double through 2^52's mantissa.
  const Bits exponent_bits = (bits >> 52) | std::uint64_t{0x4330000000000000};
  const Bits mantissa_bits =
      (bits & std::uint64_t{0x000fffffffffffff}) | std::uint64_t{0x3ff0000000000000};
  Real exponent, mantissa;
  std::memcpy(&exponent, &exponent_bits, sizeof exponent);
  std::memcpy(&mantissa, &mantissa_bits, sizeof mantissa);
  exponent = exponent - (0x1p52 + 1023.0);
  // Centre m on 1: m in [sqrt(1/2), sqrt(2)). (A bool, or a vector's lane mask.)
  const auto high = mantissa > kSqrt2;
  mantissa = high ? 0.5 * mantissa : mantissa;
  exponent = high ? exponent + 1.0 : exponent;
  // log m = 2 atanh(s), s = f / (2 + f), f = m - 1 (exact), |s| <= 0.172:
  // log m = 2s + 2s z Q(z), z = s^2, Q(z) = sum_k z^k / (2k + 3); 2s = f - s f, so
  // log m = f - s (f - 2 z Q(z)), whose leading term f is exact. Terms to z^10: the first left
  // out is below 1e-18 relative.
  const Real f = mantissa - 1.0;
  const Real s = f / (2.0 + f);
  const Real z = s * s;
  // Q by Estrin's scheme (pairs, then pairs of pairs): a dependency chain of depth ~4 instead
  // of Horner's 11, which is what bounds a vectorized loop's speed.
  const Real z2 = z * z, z4 = z2 * z2, z8 = z4 * z4;
  const Real q01 = 1.0 / 3.0 + z * (1.0 / 5.0), q23 = 1.0 / 7.0 + z * (1.0 / 9.0);
  const Real q45 = 1.0 / 11.0 + z * (1.0 / 13.0), q67 = 1.0 / 15.0 + z * (1.0 / 17.0);
  const Real q89 = 1.0 / 19.0 + z * (1.0 / 21.0);
  const Real q = (q01 + z2 * q23) + z4 * (q45 + z2 * q67) + z8 * (q89 + z2 * (1.0 / 23.0));
  const Real log_mantissa = f - s * (f - 2.0 * z * q);
  log_x = exponent * kLn2High + (exponent * kLn2Low + log_mantissa);
}

// log x for positive normal x.
inline double log_of_normal(double x) {
  double log_x;
  log_of_normal_into<double, std::uint64_t>(x, log_x);
  return log_x;
}

// exp x for x <= 709; 0 for x below -708.39 (results there would be subnormal).
inline double exp_or_zero(double x) {
  // Clamped so that the rounding trick below stays valid; results there are 0 anyway.
  const double value = std::max(x, -746.0);
  // exp(x) = 2^k exp(r), k = round(x / ln 2), |r| <= ln(2) / 2.
  const double shifted = value * kLog2E + kRoundingShift;
  const double k = shifted - kRoundingShift;
  const double r = (value - k * kLn2High) - k * kLn2Low;
  // Taylor series to r^13 / 13! (the first term left out is below 5e-18), by Estrin's scheme.
  const double p = exp_series(r);
  // 2^k from k's bits in the shifted sum (two's complement in its low mantissa bits).
  const std::uint64_t k_bits =
      std::bit_cast<std::uint64_t>(shifted) - std::bit_cast<std::uint64_t>(kRoundingShift);
  const double scale = std::bit_cast<double>((k_bits + 1023) << 52);
  return value < -708.39 ? 0.0 : p * scale;
}

// e^w, e^-w, expm1(w) and expm1(-w) together, for |w| <= 708, each within a few ulps
// (relative). With w = k ln 2 + r, |r| <= ln(2) / 2, and the odd and even parts O, E of the
// Taylor series of expm1(r) to r^13 (the first term left out is below 5e-18 relative):
//   e^w = 2^k (1 + O + E),               e^-w = 2^-k (1 + E - O),
//   expm1(w) = 2^k (O + E) + (2^k - 1),   expm1(-w) = 2^-k (E - O) + (2^-k - 1),
// where k = 0 leaves the accurate series alone, and otherwise |expm1(+-w)| > 0.29 so that the
// sums lose at most a couple of bits.
struct ExpPair {
  double exp_plus, exp_minus;      // e^w, e^-w
  double expm1_plus, expm1_minus;  // e^w - 1, e^-w - 1
};

inline ExpPair exp_pair(double w) {
  const double value = std::clamp(w, -708.0, 708.0);
  const double shifted = value * kLog2E + kRoundingShift;
  const double k = shifted - kRoundingShift;
  const double r = (value - k * kLn2High) - k * kLn2Low;
  double even, odd;
  expm1_series_parts(r, even, odd);
  // 2^k and 2^-k from k's bits (|k| <= 1022).
  const std::uint64_t k_bits =
      std::bit_cast<std::uint64_t>(shifted) - std::bit_cast<std::uint64_t>(kRoundingShift);
  const double up = std::bit_cast<double>((k_bits + 1023) << 52);
  const double down = std::bit_cast<double>((1023 - k_bits) << 52);
  const double plus = odd + even, minus = even - odd;
  return {up * (1.0 + plus), down * (1.0 + minus), up * plus + (up - 1.0),
          down * minus + (down - 1.0)};
}

}  // namespace kingman::kernels::detail
