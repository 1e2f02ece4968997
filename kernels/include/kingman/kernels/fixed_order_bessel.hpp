#pragma once
// log K_nu(z) for one fixed order, fast: MPost2 evaluates the same order p = 1 - d/2 for every
// pair a run creates (O(N n^2) calls), so it pays to fit the function once per run. The fit is
// piecewise Chebyshev in u = log(z^2) (K is analytic and smooth in log z), each piece accepted
// only when it matches log_bessel_k to 1e-13 relative at test points between its nodes;
// arguments outside the fitted range fall back to log_bessel_k.
#include <cmath>
#include <cstddef>
#include <vector>

namespace kingman::kernels {

class LogBesselKFixedOrder {
 public:
  // Fits log K_nu(sqrt(x)) for x = z^2 in [x_min, x_max] (0 < x_min < x_max).
  LogBesselKFixedOrder(double nu, double x_min, double x_max);

  // log K_nu(sqrt(x)) for x > 0: the fit inside [x_min, x_max], log_bessel_k outside.
  double of_square(double x) const { return of_square(x, std::log(x)); }
  // The same with log x supplied by a caller that needs it too.
  double of_square(double x, double log_x) const;

  // out[i] = power * log(x[i]) + log K_nu(sqrt(x[i])) for positive normal x[i] (MPost2's pair
  // term is power = nu / 2): the same fit evaluated for many arguments at once, with log x by
  // log_array's method and the Clenshaw sums of a chunk of arguments advanced together, so that
  // the compiler vectorizes both. Agrees with power * std::log(x) + of_square(x) up to the few
  // ulps by which the two logs differ (times the terms' slopes in log x); arguments outside the
  // fit take log_bessel_k, as of_square does. `out` may alias `x`.
  void log_terms(const double* x, double power, double* out, std::size_t count) const;
  // One term of log_terms, computed one operation at a time: the scalar reference that the
  // batch equals bit for bit, whatever the batch's length and the argument's place in it.
  double log_term(double x, double power) const;

  double order() const { return nu_; }
  std::size_t pieces() const { return pieces_; }

  static constexpr int kDegree = 12;  // Chebyshev degree per piece
  // Doubles per piece: c_0 ... c_kDegree, then zeros (the batched kernel reads blocks of four).
  static constexpr std::size_t kStride = 16;

 private:
  double nu_;
  double x_min_, x_max_;  // the fitted range
  double u_min_, u_max_;  // log x_min, log x_max
  double inverse_width_;  // pieces per unit of u
  std::size_t pieces_;
  std::vector<double> coefficients_;  // pieces x kStride
};

}  // namespace kingman::kernels
