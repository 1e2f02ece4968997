#include "kingman/kernels/gig_tail.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

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

}  // namespace

double log_gig_lower_tail_laguerre(double p, double chi, double psi, double r) {
  if (!std::isfinite(p) || !(chi >= 0.0) || !std::isfinite(chi) || !(psi > 0.0) ||
      !std::isfinite(psi) || !(r > 0.0) || !std::isfinite(r)) {
    throw std::domain_error(
        "log_gig_lower_tail_laguerre: need finite p, chi >= 0, psi > 0, "
        "r > 0 (got p = " +
        std::to_string(p) + ", chi = " + std::to_string(chi) + ", psi = " + std::to_string(psi) +
        ", r = " + std::to_string(r) + ")");
  }
  static const LaguerreRule rule = make_rule();
  const double a_term = chi / r, b_term = psi * r;   // chi e^{-u} and psi e^{u} at u = log r
  const double rate = p + 0.5 * (a_term - b_term);   // phi'(log r)
  const double curvature = 0.5 * (a_term + b_term);  // -phi''(log r)
  if (!(rate >= kLaguerreTailMinRate) || !(curvature <= kLaguerreTailBetaLimit * rate * rate)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  double sum = 0.0;
  for (int i = 0; i < kNodes; ++i) {
    const double distance = rule.nodes[i] / rate;  // log r - u
    // phi(log r - distance) - phi(log r) + rate * distance, through expm1 (no cancellation).
    const double exponent = -p * distance -
                            0.5 * (a_term * std::expm1(distance) + b_term * std::expm1(-distance)) +
                            rule.nodes[i];
    sum += rule.weights[i] * std::exp(exponent);
  }
  const double log_peak = p * std::log(r) - 0.5 * (a_term + b_term);  // phi(log r)
  return log_peak - std::log(rate) + std::log(sum);
}

}  // namespace kingman::kernels
