#pragma once
// The law of one pair's merge duration under the binary / multinomial model (MODEL.md sections 5,
// 6 and 7). With total rate lambda and current time T0 <= min(t_l, t_r), a merge of the pair
// after a duration delta >= 0 (at time T0 - delta) has the unnormalized density
//   f(delta) = e^{-lambda delta} Z_C(T0 - delta),
// Z_C = prod over shared columns of Z^d = 1 + x_d (S_d - 1), x_d = e^{lambda_d (2(T0 - delta) -
// t_l - t_r)}. Its mass G_C is PostPost's pair score, delta | C ~ f / G_C is PostPost's duration
// draw, and with lambda = 1 and T0 = the pair's creation time the same law is the race's clock
// (mass N_C, upper masses S_C).
//
// There is no closed form. f is an entire function of delta (Z_C is a finite sum of
// exponentials), so Gauss-Kronrod G7K15 converges fast on panels of the width over which
// the exponentials change (1 / (lambda + 2 sum lambda_d)). The mass is integrated on [0, L] by
// adaptive G7K15 on geometric panels, the panel with the largest error estimate |K15 - G7|
// bisected until the sum of the estimates is below kErrorEstimateTolerance of the mass, and L
// doubled until the tail has a rigorous bound: x_d decreases in delta, so Z^d moves
// monotonically from Z^d(L) towards 1 and on [L, inf) Z_C <= B(L) = prod_d max(1, Z^d(L)),
// hence the tail is at most B(L) e^{-lambda L} / lambda, kept below 1e-17 of the mass. All
// values are logs: every quadrature weight is positive, so a panel's integral is a
// log-sum-exp of log w_i + log f_i, finite even where Z_C is astronomically large or small.
// The accepted panels are kept so that draws invert the distribution function exactly
// (safeguarded Newton inside the panel that holds the quantile).
#include <cstddef>
#include <vector>

#include "kingman/model/discrete_messages.hpp"

namespace kingman {

class DiscreteDurationLaw {
 public:
  // Bound on the panels' summed error estimates |K15 - G7|, relative to the mass. The estimate
  // is G7's error; the K15 values used are far more accurate for this entire integrand:
  // against closed forms log_mass is within 2e-15 and log_upper within 2e-13
  // (tests/engine/discrete_duration_law_test.cpp), so the results are good to ~1e-13 relative.
  static constexpr double kErrorEstimateTolerance = 1e-10;

  DiscreteDurationLaw() = default;
  // rate = lambda > 0, start_time = T0 <= pair.latest_time(). Throws OptionError otherwise.
  DiscreteDurationLaw(const DiscretePair& pair, double rate, double start_time) {
    assign(pair, rate, start_time);
  }
  // Rebuilds the law for another pair, reusing this object's storage.
  void assign(const DiscretePair& pair, double rate, double start_time);

  double rate() const { return rate_; }
  double start_time() const { return start_time_; }

  // log f(delta) for delta >= 0 (-inf where Z_C = 0: disagreeing leaves at delta = 0).
  double log_density(double delta) const;
  // log of the mass: log integral over [0, inf) of f.
  double log_mass() const { return log_mass_; }
  // log integral over [delta0, inf) of f (log_mass() for delta0 <= 0). Accurate relative to
  // the upper mass itself, also far out in the tail.
  double log_upper(double delta0) const;
  // The delta with integral over [0, delta] of f = u * mass, for u in (0, 1): quantiles below
  // the median are found from the left, the others from the right (with 1 - u, exact for
  // u >= 1/2). Measured against closed forms: u is matched to 1e-14 relative below the median,
  // 1 - u to 1e-15 absolute above it (far-tail panels are accurate relative to the whole mass,
  // not to themselves). Throws OptionError for u outside (0, 1).
  double draw(double u) const;

  // Panels accepted by the adaptive quadrature (for tests and cost reports).
  std::size_t panel_count() const { return panels_.size(); }
  // Evaluations of f made to build the law (draws and log_upper make more).
  std::size_t evaluations() const { return evaluations_; }

 private:
  struct Column {
    double overlap;      // S_d
    double rate;         // lambda_d
    double log_x_start;  // log x_d at delta = 0: lambda_d (2 T0 - t_l - t_r) <= 0
  };
  struct Panel {
    double begin, end;
    double log_integral;  // log of the K15 estimate of the integral of f over the panel
    double log_error;     // log |K15 - G7|
  };

  // f over [begin, end]: K15 and G7 estimates in log space.
  Panel evaluate_panel(double begin, double end) const;
  // Adaptive panels on [begin, inf) whose summed error estimates are below
  // kErrorEstimateTolerance of their K15 sum, with the tail past the last panel below 1e-17
  // of it. Returns the log of the sum and adds the number of evaluations of f to `evaluations`.
  double integrate_from(double begin, std::vector<Panel>& panels, std::size_t& evaluations) const;
  // log of the rigorous bound B(L) e^{-lambda L} / lambda on the integral over [L, inf).
  double log_tail_bound(double length) const;
  // log integral over [a, b] of f, by the K15 rule on [a, b] (a sub-interval of a panel).
  double log_partial(double a, double b) const;
  // Inside panel i: the delta whose integral from the panel's start (from_left) or to its end
  // (!from_left) is exp(log_target).
  double invert_in_panel(std::size_t i, double log_target, bool from_left) const;

  double rate_ = 1.0;
  double start_time_ = 0.0;
  double length_scale_ = 1.0;  // 1 / (lambda + 2 sum lambda_d): the first panel's width
  bool common_rate_ = true;
  std::vector<Column> columns_;
  std::vector<Panel> panels_;            // sorted, contiguous, covering [0, L]
  std::vector<double> share_;            // integral of panel i / mass
  std::vector<double> left_share_;       // sum of share_ over the panels before i (P + 1 values)
  std::vector<double> right_share_;      // sum of share_ over panels i.. (P + 1 values, last 0)
  std::vector<double> log_right_;        // log of the integral over panels i.. (last -inf)
  std::vector<double> log_right_error_;  // log of the error estimates summed over panels i..
  double log_mass_ = 0.0;
  std::size_t evaluations_ = 0;
};

}  // namespace kingman
