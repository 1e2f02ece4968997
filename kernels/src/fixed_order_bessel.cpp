#include "kingman/kernels/fixed_order_bessel.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>

#include "kingman/kernels/log_bessel_k.hpp"

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

}  // namespace kingman::kernels
