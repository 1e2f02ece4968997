#pragma once
// Exact draws from the GIG density f(s) = s^{p-1} exp(-(chi/s + psi s)/2) truncated to s >= lower
// (gig.hpp) by inversion of the distribution function. A draw by inversion is monotone in its
// uniform, which the rejection samplers (gig.hpp, gig_quick_sampler.hpp) are not: a caller that
// only needs to know whether the draw falls below some point can decide it from the uniform and
// a bound on the distribution function there, and skip the draw itself (the race, race.cpp).
namespace kingman::kernels {

// The s >= lower with int_lower^s f = w int_lower^inf f, for w in (0, 1): s = F^{-1}(w) for the
// truncated distribution. Safeguarded Newton on log(s - lower) (w <= 1/2) or log s (w > 1/2),
// with the integrals of gig.hpp; the result is accurate to ~1e-12 relative in s - lower.
// Domain as gig.hpp (std::domain_error otherwise), plus w in (0, 1).
double gig_truncated_quantile(double p, double chi, double psi, double lower, double w);

// log int_lower^inf f, as log_gig_upper_integral, faster where lower is far below the mode.
double log_gig_mass_beyond(double p, double chi, double psi, double lower);

// s - lower for the same s, computed directly (s itself rounds it to an ulp of lower), given
// log int_lower^inf f = log_gig_mass_beyond(p, chi, psi, lower).
double gig_truncated_quantile_excess(double p, double chi, double psi, double lower, double w,
                                     double log_upper_mass);

}  // namespace kingman::kernels
