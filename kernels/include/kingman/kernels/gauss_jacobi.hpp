#pragma once
// Gauss-Jacobi quadrature on [0, 1] for the weight (1 - u)^c, c > -1:
//     sum_i weight_i p(node_i) = integral_0^1 (1 - u)^c p(u) du
// exactly (up to rounding) for every polynomial p of degree below 2N, with N nodes. The weights
// are positive, so a positive integrand is summed without cancellation.
//
// Nodes are eigenvalues of the Jacobi matrix of the monic recurrence (Golub and Welsch), refined
// by Newton steps on the orthonormal polynomial p_N, and weights are the Christoffel numbers
// 1 / sum_{k<N} p_k(u_i)^2 of the orthonormal polynomials, which keep their relative precision
// where eigenvector components would not. The recurrence is written in the distance from the
// end where the weight piles up (u for c >= 0, 1 - u for c < 0), so that the nodes there keep
// their relative precision, and each node is given as u_i and as 1 - u_i, each to its own
// relative precision.
#include <cstddef>
#include <vector>

namespace kingman::kernels {

struct GaussJacobiRule {
  double exponent = 0.0;           // c
  std::vector<double> node;        // u_i, ascending, in (0, 1)
  std::vector<double> complement;  // 1 - u_i (node + complement = 1 to within an ulp)
  std::vector<double> weight;      // > 0, summing to 1 / (c + 1)
};

// The N-point rule for the weight (1 - u)^c. Throws std::domain_error unless c > -1 and c is
// finite, and 1 <= points <= 512.
GaussJacobiRule gauss_jacobi_rule(std::size_t points, double exponent);

}  // namespace kingman::kernels
