#pragma once
// The law of one pair's merge duration under the Brownian model with per-dimension messages
// (data with missing entries; MODEL.md sections 3.4, 5 and 6), integrated by
// AdaptiveDurationLaw. With total rate lambda and current time T0, a merge after a duration
// delta >= 0 has the unnormalized density
//   f(delta) = e^{-lambda delta} prod_j N(Delta_j; 0, s_j / Lambda_jj),  s_j = r_j + 2 delta,
// over the dimensions j both clusters observe (SharedDimensions at T0). With one offset r for
// every dimension this is the truncated GIG of the complete-data case; with several it has no
// closed form. Dimensions with equal offsets are summed into one group (k_g dimensions, E_g =
// sum of their Delta_j^2), so an evaluation costs a log per distinct offset.
//
// Where the mass lies: log f has slope h(delta) = -lambda + sum_g (E_g / s_g^2 - k_g / s_g),
// so the panels are anchored at a root of h (a mode; at 0 when h(0) <= 0), as wide as the
// density's curvature there. Tail: each group's factor s^{-k/2} e^{-E/(2s)} increases up to
// s = E/k and decreases after, so on [L, inf) it is at most its value at max(s_g(L), E_g/k_g),
// and the tail is at most e^{-lambda L} / lambda times the product of those bounds.
#include <cstddef>
#include <vector>

#include "adaptive_duration_law.hpp"
#include "kingman/model/brownian_messages.hpp"

namespace kingman {

// log G_C = log of the integral over [0, inf) of f, in closed form when every shared dimension
// has the same offset r: the complete-data truncated GIG (MODEL.md section 5),
//   G_C = 1/2 (2 pi)^{-k/2} prod_j Lambda_jj^{-1/2} e^{lambda r / 2} I(r),  p = 1 - k/2,
// and -log lambda with no shared dimension. NaN where the offsets differ. Agrees with
// BrownianDurationLaw's log_mass to ~1e-13 (tests/engine/brownian_duration_law_test.cpp).
// Throws NumericalError where the density is not integrable.
double single_offset_log_mass(const SharedDimensions& shared, double rate);
// Whether every shared dimension has the same offset (also with none): single_offset_log_mass
// then gives the mass, and no law is needed.
bool has_one_offset(const SharedDimensions& shared);

// An upper bound on log G_C (the mass of BrownianDurationLaw(shared, rate, T) or
// single_offset_log_mass), for a few operations and two logs: +inf where an offset is 0, the
// exact -log(rate) with no shared dimension. With K shared dimensions, E = sum Delta_j^2 and
// u = r_min + 2 delta, every s_j = r_j + 2 delta lies in [u, u r_max / r_min], so
//   log Z(delta) <= c - (K/2) log u - E' / (2u),  E' = E r_min / r_max,
// (c the law's constant), and with e^{-lambda delta} = e^{-theta lambda delta} e^{-(1 - theta)
// lambda delta}, theta = 0.9,
//   G_C <= 1 / ((1 - theta) lambda) * max over u >= r_min of
//          exp(c - theta lambda (u - r_min) / 2 - (K/2) log u - E' / (2u)),
// whose maximum is at the root of theta lambda u^2 + K u - E' = 0 (or at r_min). It is within
// a few tens of nats of log G_C where pairs lie far apart, which is all that PostPost needs it
// for: telling pairs whose mass cannot matter (law_proposal_system.hpp).
double log_mass_upper_bound(const SharedDimensions& shared, double rate);
// The same bound less the constant c, from K dimensions, E = sum Delta_j^2 and the smallest and
// largest offsets (the complete-data case has r_min = r_max): +inf where r_min is not > 0.
double log_mass_upper_bound(double dims, double energy, double smallest_offset,
                            double largest_offset, double rate);

// An upper bound on the log of the share of the mass that lies below delta0 > 0,
// log(integral_0^delta0 f / G_C), for a few operations (+inf where r_min is not > 0): with u,
// E' and r_min, r_max as above, and rho = r_max / r_min, the density lies between e^c times
//   g_upper(delta) = e^{-lambda delta} u^{-K/2} e^{-E' / (2u)}  and
//   g_lower(delta) = e^{-lambda delta} (rho u)^{-K/2} e^{-E / (2u)},
// so the share is at most delta0 max_[0, delta0] g_upper over a lower bound on the integral
// of g_lower: g_lower is unimodal (its log's slope, -lambda - K/u + E/u^2, changes sign once),
// so over any interval [a, b] its integral is at least (b - a) min(g_lower(a), g_lower(b));
// the interval is its peak, as wide as its curvature there. Then times 2, for rounding. The
// race skips the clocks it shows cannot ring before a threshold (missing_smc.cpp).
double log_lower_share_upper_bound(double dims, double energy, double smallest_offset,
                                   double largest_offset, double rate, double delta0);

class BrownianDurationLaw final : public AdaptiveDurationLaw {
 public:
  BrownianDurationLaw() = default;
  // rate = lambda > 0; shared: the pair's dimensions at T0 = start_time (offsets r_j >= 0).
  // Throws OptionError for a bad rate or offset, NumericalError where the density is not
  // integrable (two clusters of zero variance that agree on two or more dimensions).
  BrownianDurationLaw(const SharedDimensions& shared, double rate, double start_time) {
    assign(shared, rate, start_time);
  }
  void assign(const SharedDimensions& shared, double rate, double start_time);

  double log_density(double delta) const override;

 private:
  struct Group {
    double offset;  // r_g
    double dims;    // k_g
    double energy;  // E_g = sum of Delta_j^2
  };

  double log_tail_bound(double length) const override;
  // The groups' logs by the vectorized kernel, a group at a time.
  void log_density_batch(const double* deltas, double* out, std::size_t count) const override;
  // The slope h and its derivative at delta.
  void slope(double delta, double& h, double& dh) const;
  // A root of h in (0, inf) given h(0) > 0, by safeguarded Newton steps.
  double mode_inside() const;

  double lambda_ = 1.0;    // the total rate, as rate()
  double constant_ = 0.0;  // -(k/2) log(2 pi) + 1/2 sum log Lambda_jj
  std::vector<Group> groups_;
};

}  // namespace kingman
