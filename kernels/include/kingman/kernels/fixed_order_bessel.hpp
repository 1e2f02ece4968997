#pragma once
// power * log x + log K_nu(sqrt x) for one fixed order and power, fast: MPost2 evaluates the same
// order p = 1 - d/2 (with power p / 2) for every pair a run creates (O(N n^2) calls), so it pays
// to fit the function once per run.
//
// The fit is piecewise Chebyshev of degree 7 in x, its pieces cut from the binary representation
// of x: each binade [2^e, 2^(e+1)) is split into 2^j pieces of equal width, so that the piece is
// the top bits of x (exponent and j mantissa bits, less the first piece's) and the local
// coordinate the mantissa bits below them: integer operations, no logarithm, and short
// recurrences (bench/RESULTS.md, Kernels). A piece spans at most 2^-j of its distance from 0,
// where the function's singularity lies, so the polynomials converge fast.
//
// The values the pieces interpolate come from a reference fit in u = log x (degree 12 on whole
// binades, or on pieces of them like the final ones where a binade does not pass, each accepted
// only where it matches log_bessel_k to 1e-13 relative at test points between its nodes):
// log_bessel_k itself at every node and test point of the finer pieces would cost about
// ten times as much, once per run. j grows until every piece matches the reference to 5e-14 of
// (1 + the larger of the two terms) at test points between its nodes (every gap for one piece
// per binade, the hardest; the outermost gaps and the ends, where the error peaks, for the
// rest): within 2e-13 of the exact term in all, 1e-14 typically. Arguments outside the fitted
// range take log_bessel_k.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace kingman::kernels {

class LogBesselKFixedOrder {
 public:
  // Runs body(begin, end) on sub-ranges that cover [0, count) exactly once, possibly on several
  // threads at once (a parallel for; the kernels have no scheduler of their own). Each index
  // costs about work_per_index arithmetic operations, for deciding whether to split at all.
  using RangeLoop =
      std::function<void(std::size_t count, std::size_t work_per_index,
                         const std::function<void(std::size_t begin, std::size_t end)>& body)>;

  // Fits power * log x + log K_nu(sqrt(x)) for x = z^2 in [x_min, x_max] (0 < x_min < x_max <
  // inf). std::domain_error for a bad range; std::runtime_error where no fit converges. The
  // pieces are independent: `loop`, where given, fits them (a run's fit took ~0.4 ms on one
  // thread, serial time in every MPost2 run); the fit is the same whatever the loop.
  LogBesselKFixedOrder(double nu, double x_min, double x_max, double power = 0.0,
                       const RangeLoop& loop = {});

  // power * log x + log K_nu(sqrt x) for x > 0: the fit inside [x_min, x_max], log_bessel_k
  // outside. The scalar reference: one operation at a time, terms()'s operations in its order,
  // so the same bits.
  double term(double x) const;

  // out[i] = term(x[i]) for a batch, in SIMD lanes: the same bits whatever the batch's length,
  // an argument's place in it, or the SIMD copy that runs. `out` may alias `x`.
  void terms(const double* x, double* out, std::size_t count) const;

  double order() const { return nu_; }
  double power() const { return power_; }
  std::size_t pieces() const { return pieces_; }
  int piece_bits() const { return 52 - shift_; }  // j: 2^j pieces per binade

  static constexpr int kDegree = 7;          // Chebyshev degree per piece
  static constexpr std::size_t kStride = 8;  // doubles per piece: c_0 ... c_7
  static constexpr int kMostPieceBits = 10;  // j at most (a fit that needs more fails)

 private:
  double nu_, power_;
  double x_min_, x_max_;  // the fitted range
  int shift_;             // 52 - j: the mantissa bits of x below its piece's
  std::uint64_t first_;   // bits(x_min) >> shift_: the first piece's number
  std::size_t pieces_;
  std::vector<double> coefficients_;  // pieces x kStride
};

}  // namespace kingman::kernels
