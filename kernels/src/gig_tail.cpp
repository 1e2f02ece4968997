#include "kingman/kernels/gig_tail.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "number_text.hpp"
#include "simd_copies.hpp"
#include "vector_math_detail.hpp"

namespace kingman::kernels {

namespace {

constexpr int kNodes = 16;

struct LaguerreRule {
  std::array<double, kNodes> nodes, weights;
};

// Gauss-Laguerre nodes and weights (weight e^{-v} on [0, inf)): Newton on the Laguerre
// polynomial from the usual asymptotic starting points, in long double, once.
LaguerreRule make_rule() {
  LaguerreRule rule;
  long double z = 0.0L, previous_root = 0.0L, before_previous = 0.0L;
  for (int i = 0; i < kNodes; ++i) {
    if (i == 0) {
      z = 3.0L / (1.0L + 2.4L * kNodes);
    } else if (i == 1) {
      z += 15.0L / (1.0L + 2.5L * kNodes);
    } else {
      const long double ai = i - 1;
      z += ((1.0L + 2.55L * ai) / (1.9L * ai)) * (z - before_previous);
    }
    long double value = 0.0L, lower = 0.0L, derivative = 1.0L;
    for (int iteration = 0; iteration < 100; ++iteration) {
      value = 1.0L;
      lower = 0.0L;
      for (int j = 0; j < kNodes; ++j) {  // L_{j+1} from L_j and L_{j-1}
        const long double older = lower;
        lower = value;
        value = ((2 * j + 1 - z) * lower - j * older) / (j + 1);
      }
      derivative = kNodes * (value - lower) / z;
      const long double step = value / derivative;
      z -= step;
      if (std::fabs(step) <= 1e-19L * std::fabs(z)) break;
    }
    rule.nodes[i] = static_cast<double>(z);
    rule.weights[i] = static_cast<double>(-1.0L / (derivative * kNodes * lower));
    before_previous = previous_root;
    previous_root = z;
  }
  return rule;
}

// The rule's integrand at its nodes: out[i] = exp(phi(log r - d_i) - phi(log r) + rate d_i + v_i)
// with d_i = v_i / rate (v_i the nodes), the exponent through expm1 (no cancellation). The
// kernels' exp_pair and exp (vector_math_detail.hpp) in place of 32 expm1 and 16 exp calls of
// libm, in SIMD lanes (d_i <= 26 here, inside exp_pair's range; terms below e^-708 of the
// peak are 0, far under the rule's 1e-10).
struct LaguerreTermsKernel {
  template <std::size_t>
  [[gnu::always_inline]] static void run(double p, double a_term, double b_term, double rate,
                                         const double* nodes, double* out) {
    for (int i = 0; i < kNodes; ++i) {
      const double distance = nodes[i] / rate;  // log r - u
      const detail::ExpPair e = detail::exp_pair(distance);
      out[i] = detail::exp_or_zero(
          -p * distance - 0.5 * (a_term * e.expm1_plus + b_term * e.expm1_minus) + nodes[i]);
    }
  }
};

void laguerre_terms(double p, double a_term, double b_term, double rate, const double* nodes,
                    double* out) {
  detail::run_in_copy<LaguerreTermsKernel>(p, a_term, b_term, rate, nodes, out);
}

}  // namespace

double log_gig_lower_tail_laguerre(double p, double chi, double psi, double r) {
  if (!std::isfinite(p) || !(chi >= 0.0) || !std::isfinite(chi) || !(psi > 0.0) ||
      !std::isfinite(psi) || !(r > 0.0) || !std::isfinite(r)) {
    throw std::domain_error(
        "log_gig_lower_tail_laguerre: need finite p, chi >= 0, psi > 0, "
        "r > 0 (got p = " +
        detail::number_text(p) + ", chi = " + detail::number_text(chi) +
        ", psi = " + detail::number_text(psi) + ", r = " + detail::number_text(r) + ")");
  }
  static const LaguerreRule rule = make_rule();
  const double a_term = chi / r, b_term = psi * r;   // chi e^{-u} and psi e^{u} at u = log r
  const double rate = p + 0.5 * (a_term - b_term);   // phi'(log r)
  const double curvature = 0.5 * (a_term + b_term);  // -phi''(log r)
  if (!(rate >= kLaguerreTailMinRate) || !(curvature <= kLaguerreTailBetaLimit * rate * rate)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  double terms[kNodes];
  laguerre_terms(p, a_term, b_term, rate, rule.nodes.data(), terms);
  double sum = 0.0;
  for (int i = 0; i < kNodes; ++i) sum += rule.weights[i] * terms[i];
  const double log_peak = p * std::log(r) - 0.5 * (a_term + b_term);  // phi(log r)
  return log_peak - std::log(rate) + std::log(sum);
}

}  // namespace kingman::kernels
