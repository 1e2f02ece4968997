#include "kingman/kernels/gauss_jacobi.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kingman::kernels {

namespace {

// Monic three-term recurrence p_{k+1}(w) = (w - a_k) p_k(w) - b_k p_{k-1}(w) of the weight
// (1 - w)^c on [0, 1] (mirrored: of w^c), the Jacobi weight (1 - x)^c on [-1, 1] in
// w = (1 + x) / 2 (of (1 + x)^c). The numerators are written without cancellation for c > -1,
// k >= 1: 2k(k + c + 1) + c > 0 and 2k(k + c + 1) + c(c + 1) > 0; b_k is the same for both.
double recurrence_a(double k, double c, bool mirrored) {
  if (k == 0.0) return (mirrored ? c + 1.0 : 1.0) / (c + 2.0);
  return (2.0 * k * (k + c + 1.0) + (mirrored ? c * (c + 1.0) : c)) /
         ((2.0 * k + c) * (2.0 * k + c + 2.0));
}
double recurrence_b(double k, double c) {  // k >= 1
  if (k == 1.0) return (1.0 + c) / ((2.0 + c) * (2.0 + c) * (3.0 + c));
  const double twice = 2.0 * k + c;
  return k * k * (k + c) * (k + c) / (twice * twice * (twice + 1.0) * (twice - 1.0));
}

}  // namespace

GaussJacobiRule gauss_jacobi_rule(std::size_t points, double exponent) {
  if (!(exponent > -1.0) || !std::isfinite(exponent) || points < 1 || points > 512) {
    throw std::domain_error("gauss_jacobi_rule: needs c > -1 finite and 1 <= N <= 512, got c = " +
                            std::to_string(exponent) + ", N = " + std::to_string(points));
  }
  const double c = exponent;
  const std::size_t n = points;
  // The nodes are found in the coordinate w that is small where the weight piles up: u itself
  // for c >= 0, and 1 - u for c < 0 (the weight is then singular at u = 1).
  const bool mirrored = c < 0.0;
  std::vector<double> a(n), root_b(n + 1, 0.0);  // root_b[k] = sqrt(b_k), k = 1..n
  for (std::size_t k = 0; k < n; ++k) a[k] = recurrence_a(static_cast<double>(k), c, mirrored);
  for (std::size_t k = 1; k <= n; ++k)
    root_b[k] = std::sqrt(recurrence_b(static_cast<double>(k), c));
  const double mass = 1.0 / (c + 1.0);

  Eigen::VectorXd diagonal(static_cast<Eigen::Index>(n));
  Eigen::VectorXd off(static_cast<Eigen::Index>(n > 1 ? n - 1 : 1));
  for (std::size_t k = 0; k < n; ++k) diagonal[static_cast<Eigen::Index>(k)] = a[k];
  for (std::size_t k = 1; k < n; ++k) off[static_cast<Eigen::Index>(k - 1)] = root_b[k];
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver;
  solver.computeFromTridiagonal(diagonal, off.head(static_cast<Eigen::Index>(n - 1)),
                                Eigen::EigenvaluesOnly);

  // The orthonormal p_0..p_N at w: returns p_N and its derivative, and sum_{k<N} p_k^2.
  auto orthonormal = [&](double u, double& derivative, double& squares) {
    double before = 0.0, value = std::sqrt(1.0 / mass);
    double before_slope = 0.0, slope = 0.0;
    squares = value * value;
    for (std::size_t k = 0; k < n; ++k) {
      const double next = ((u - a[k]) * value - root_b[k] * before) / root_b[k + 1];
      const double next_slope =
          (value + (u - a[k]) * slope - root_b[k] * before_slope) / root_b[k + 1];
      before = value;
      value = next;
      before_slope = slope;
      slope = next_slope;
      if (k + 1 < n) squares += value * value;
    }
    derivative = slope;
    return value;
  };

  GaussJacobiRule rule;
  rule.exponent = c;
  rule.node.resize(n);
  rule.complement.resize(n);
  rule.weight.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    double w = solver.eigenvalues()[static_cast<Eigen::Index>(i)];
    double derivative = 0.0, squares = 0.0;
    // Newton steps on p_N: the eigenvalue is good to about eps |J|; two steps make it good
    // relative to w itself.
    for (int step = 0; step < 2; ++step) {
      const double value = orthonormal(w, derivative, squares);
      if (derivative != 0.0 && std::isfinite(value / derivative)) w -= value / derivative;
    }
    orthonormal(w, derivative, squares);
    // Ascending in u: mirrored nodes come in descending order of u.
    const std::size_t at = mirrored ? n - 1 - i : i;
    rule.node[at] = mirrored ? 1.0 - w : w;
    rule.complement[at] = mirrored ? w : 1.0 - w;
    rule.weight[at] = 1.0 / squares;
  }
  return rule;
}

}  // namespace kingman::kernels
