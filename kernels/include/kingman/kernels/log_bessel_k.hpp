#pragma once
// The logarithm of the modified Bessel function of the second kind, log K_nu(z), without
// overflow or underflow: K_nu(z) spans e^{+-15000} over the orders and arguments the SMC needs
// (|nu| = |1 - d/2| up to 500, z = sqrt(chi psi) from ~0 to ~1e6), far beyond double range.

namespace kingman::kernels {

// log K_nu(z) for any real order nu (K_{-nu} = K_nu) and z > 0.
// Accuracy: absolute error <= 1e-12 * max(1, |log K_nu(z)|) for |nu| <= 500 and
// z in [1e-10, 1e5] (tested against tests/data/log_bessel_k_table.csv); the same methods stay
// accurate further out (any |nu|, z in [1e-300, 1e300]).
// Edge cases: z == 0 gives +inf, z == +inf gives -inf, NaN in gives NaN, z < 0 throws
// std::domain_error.
double log_bessel_k(double nu, double z);

// The branch switch points, exposed so that tests can probe both sides of each.
// |nu| >= kLogBesselDebyeMinOrder: uniform large-order (Debye) expansion.
inline constexpr double kLogBesselDebyeMinOrder = 25.0;
// Otherwise nu = n + mu with |mu| <= 1/2: Temme's series for K_mu, K_{mu+1} when
// z <= kLogBesselSteedMinArgument, Steed's continued fraction above; then n steps of the forward
// recurrence in log space.
inline constexpr double kLogBesselSteedMinArgument = 2.0;

}  // namespace kingman::kernels
