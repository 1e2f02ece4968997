#pragma once
// The lower GIG integral int_0^r f(s) ds, f(s) = s^{p-1} exp(-(chi/s + psi s)/2) (gig.hpp), by a
// fixed 16-point Gauss-Laguerre rule where r lies well below the mode: there, in u = log s, the
// log integrand phi falls off below log r at a rate a = phi'(log r) > 0 that barely changes over
// the distances 1/a that matter, so with v = (log r - u) a,
//     int_0^r f = e^{phi(log r)} / a * int_0^inf e^{-v} h(v) dv,   h(v) = e^{phi(log r - v/a)
//                 - phi(log r) + v} <= 1,
// and h is smooth on the scale of the Laguerre nodes when beta = -phi''(log r) / a^2 is small.
// The race (MODEL.md section 6) uses it for the survival of killed pair clocks, 20 to 50 times
// faster than the adaptive quadrature of log_gig_lower_integral.
namespace kingman::kernels {

// Where log_gig_lower_tail_laguerre answers: beta at most kLaguerreTailBetaLimit and the rate
// a at least kLaguerreTailMinRate (with a small rate, p > 0 and a tiny chi, the chi term cuts the
// tail off sharply inside the nodes' range). The relative error of the integral is below 1e-10
// there (tests/kernels/gig_tail_test.cpp: a grid of 8 shapes, 8 chi, 3 psi, 30 bounds).
inline constexpr double kLaguerreTailBetaLimit = 0.08;
inline constexpr double kLaguerreTailMinRate = 2.0;

// log int_0^r f(s) ds for r > 0 below the GIG mode where the conditions above hold; NaN where
// they fail (use log_gig_lower_integral there). Same domain as gig.hpp
// (std::domain_error otherwise).
double log_gig_lower_tail_laguerre(double p, double chi, double psi, double r);

}  // namespace kingman::kernels
