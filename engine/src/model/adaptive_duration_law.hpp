#pragma once
// The law of one pair's merge duration when it has no closed form (MODEL.md sections 5 and 6):
// with total rate lambda and current time T0, a merge after a duration delta >= 0 has the
// unnormalized density f(delta) = e^{-lambda delta} Z_C(T0 - delta). Its mass G_C is PostPost's
// pair score, delta | C ~ f / G_C is PostPost's duration draw, and with lambda = 1 and T0 = the
// pair's creation time the same law is the race's clock (mass N_C, upper masses S_C).
//
// A model supplies log f and a rigorous bound on the tail integral (the derived classes:
// discrete_duration_law.hpp, brownian_duration_law.hpp); this class integrates it. The mass is
// integrated by adaptive Gauss-Kronrod G7K15 on geometric panels around an anchor (where the
// model expects the mass: 0, or the density's mode), the panel with the largest error estimate
// |K15 - G7| bisected until the sum of the estimates is below kErrorEstimateTolerance of the
// mass, and the panels extended outwards until the tail bound is below 1e-17 of the mass. All
// values are logs: every quadrature weight is positive, so a panel's integral is a log-sum-exp
// of log w_i + log f_i, finite even where Z_C is astronomically large or small. The accepted
// panels are kept so that draws invert the distribution function exactly (safeguarded Newton
// inside the panel that holds the quantile).
#include <array>
#include <cstddef>
#include <vector>

namespace kingman {

// One panel of the adaptive quadrature: [begin, end] and the logs of its K15 estimate and of
// |K15 - G7|.
struct AdaptiveDurationLawPanel {
  double begin, end;
  double log_integral;
  double log_error;
};

class AdaptiveDurationLaw {
 public:
  static constexpr std::size_t kRuleSize = 15;  // Gauss-Kronrod nodes per panel
  // Bound on the panels' summed error estimates |K15 - G7|, relative to the mass. The estimate
  // is G7's error; the K15 values used are far more accurate for the smooth integrands here:
  // against closed forms log_mass is within 2e-15 and log_upper within 2e-13
  // (tests/engine/discrete_duration_law_test.cpp, brownian_duration_law_test.cpp), so the
  // results are good to ~1e-13 relative.
  static constexpr double kErrorEstimateTolerance = 1e-10;

  virtual ~AdaptiveDurationLaw() = default;

  double rate() const { return rate_; }
  double start_time() const { return start_time_; }

  // log f(delta) for delta >= 0 (-inf where Z_C = 0).
  virtual double log_density(double delta) const = 0;
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

  // Refines the panels (more of them past the last, bisections from delta0's on) until
  // log_upper(delta0) is read off them: their error estimates from delta0's panel on, and the
  // tail bound past the last, below the tolerances relative to that upper mass. For a law that
  // will be asked for upper masses as far out as delta0 (PostPost's shared laws,
  // step_pair_laws.hpp); otherwise each such call would integrate [delta0, inf) afresh. The
  // mass, upper masses and draws then come from the refined panels.
  void resolve_upper(double delta0);

  // Panels accepted by the adaptive quadrature (for tests and cost reports).
  std::size_t panel_count() const { return panels_.size(); }
  // Evaluations of f made to build the law (draws and log_upper make more).
  std::size_t evaluations() const { return evaluations_; }

 protected:
  AdaptiveDurationLaw() = default;
  AdaptiveDurationLaw(const AdaptiveDurationLaw&) = default;
  AdaptiveDurationLaw(AdaptiveDurationLaw&&) = default;
  AdaptiveDurationLaw& operator=(const AdaptiveDurationLaw&) = default;
  AdaptiveDurationLaw& operator=(AdaptiveDurationLaw&&) = default;

  // log of a rigorous bound on the integral of f over [length, inf).
  virtual double log_tail_bound(double length) const = 0;
  // out[i] = log_density(deltas[i]) (up to a few ulps): a model may evaluate many at once.
  virtual void log_density_batch(const double* deltas, double* out, std::size_t count) const;

  // Called by the derived class's assign once log_density is ready: Z = 1, the exponential law
  // in closed form; or the adaptive quadrature, with first panels `width` wide on each side of
  // `anchor` >= 0 (anchor 0: panels 0 + width (2^k - 1)).
  void set_exponential(double rate, double start_time);
  void integrate(double rate, double start_time, double width, double anchor);

 private:
  using Panel = AdaptiveDurationLawPanel;

  // The K15 and G7 sums of f on [a, b]: sum w e^{log f - shift}, shift = the largest log f.
  struct RuleSums {
    double log_shift, kronrod, gauss;
  };
  RuleSums apply_rule(double a, double b) const;
  // The same for `count` panels [begins[k], ends[k]] at once, into sums[k].
  void apply_rules(const double* begins, const double* ends, std::size_t count,
                   RuleSums* sums) const;
  // The sums from exp(log f - log_shift) at the rule's nodes, log_shift their largest log f.
  static RuleSums sum_rule(const double* values, double log_shift);
  // f over [begin, end]: K15 and G7 estimates in log space; and for `count` panels at once.
  Panel evaluate_panel(double begin, double end) const;
  void evaluate_panels(const double* begins, const double* ends, std::size_t count,
                       Panel* out) const;
  // Adaptive panels on [begin, inf) whose summed error estimates are below
  // kErrorEstimateTolerance of their K15 sum, with the tail past the last panel below 1e-17
  // of it. Returns the log of the sum and adds the number of evaluations of f to `evaluations`.
  double integrate_from(double begin, std::vector<Panel>& panels, std::size_t& evaluations) const;
  // log integral over [a, b] of f, by the K15 rule on [a, b] (a sub-interval of a panel).
  double log_partial(double a, double b) const;
  // Replaces panels[i] by its two halves; false (nothing done) where it cannot be halved or the
  // panels would exceed their limit.
  bool bisect(std::vector<Panel>& panels, std::size_t i, std::size_t& evaluations) const;
  // The panels' shares, running sums and logs of their sums, from panels_ and log_mass_.
  void update_sums();
  // Inside panel i: the delta whose integral from the panel's start (from_left) or to its end
  // (!from_left) is exp(log_target).
  double invert_in_panel(std::size_t i, double log_target, bool from_left) const;

  double rate_ = 1.0;
  double start_time_ = 0.0;
  double width_ = 1.0;                   // the first panels' width
  double anchor_ = 0.0;                  // where the first panels meet
  bool exponential_ = true;              // Z = 1
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
