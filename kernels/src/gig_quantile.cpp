#include "kingman/kernels/gig_quantile.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <boost/math/quadrature/gauss.hpp>
#include <boost/math/special_functions/erf.hpp>

#include "kingman/kernels/gig.hpp"
#include "kingman/kernels/gig_tail.hpp"
#include "number_text.hpp"

namespace kingman::kernels {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// The integrals are accurate to ~1e-12 relative, so the equation is solved to that level in
// log units; a Newton step this small means the root is reached to the integrals' accuracy.
constexpr double kStepTolerance = 1e-12;
constexpr double kResidualTolerance = 1e-13;
constexpr int kMaxIterations = 100;
constexpr double kMaxStep = 8.0;

double log_density(double p, double chi, double psi, double s) {
  return (p - 1.0) * std::log(s) - 0.5 * (chi / s + psi * s);
}

// log int_a^b f by a 20-point Gauss-Legendre rule, accurate to rounding where the interval is
// narrow against the density's spread: log f changes by a few units at most and b - a is small
// against a (the pole of chi/s at 0). NaN where the interval is not that narrow.
double log_narrow_integral(double p, double chi, double psi, double a, double b) {
  const double width = b - a;
  if (!(a > 0.0) || !(width <= 0.125 * a)) return std::nan("");
  auto slope = [&](double x) { return (p - 1.0) / x + 0.5 * chi / (x * x) - 0.5 * psi; };
  if (!(std::fabs(slope(a)) * width <= 4.0 && std::fabs(slope(b)) * width <= 4.0))
    return std::nan("");
  const double at_a = log_density(p, chi, psi, a);
  const double sum = boost::math::quadrature::gauss<double, 20>::integrate(
      [&](double x) { return std::exp(log_density(p, chi, psi, x) - at_a); }, a, b);
  return at_a + std::log(sum);
}

// log int_lower^s f. gig.hpp's interval integral works on windows scaled to the density's
// spread, so it resolves an interval much narrower than that only to ~1e-7 relative, and it
// costs microseconds; the Newton steps of the inversion take small steps from a point whose
// mass is known, so the mass is carried from the last point by the narrow rule when it applies.
class MassFromLower {
 public:
  MassFromLower(double p, double chi, double psi, double lower)
      : p_(p), chi_(chi), psi_(psi), lower_(lower) {}

  double operator()(double s) {
    double log_mass = std::nan("");
    if (known_) {
      if (s >= known_s_) {
        const double step = log_narrow_integral(p_, chi_, psi_, known_s_, s);
        if (!std::isnan(step)) log_mass = log_add(known_log_mass_, step);
      } else {
        const double step = log_narrow_integral(p_, chi_, psi_, s, known_s_);
        // Subtract only a small part, so that no precision is lost.
        if (!std::isnan(step) && step < known_log_mass_ - 1.0)
          log_mass = known_log_mass_ + std::log1p(-std::exp(step - known_log_mass_));
      }
    }
    if (std::isnan(log_mass)) log_mass = direct(s);
    known_ = true;
    known_s_ = s;
    known_log_mass_ = log_mass;
    return log_mass;
  }

 private:
  static double log_add(double a, double b) {
    return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
  }

  double direct(double s) const {
    const double narrow = log_narrow_integral(p_, chi_, psi_, lower_, s);
    if (!std::isnan(narrow)) return narrow;
    if (lower_ == 0.0) {
      // The lower tail; far below the mode the 16-point Laguerre rule is much cheaper.
      const double tail = log_gig_lower_tail_laguerre(p_, chi_, psi_, s);
      if (!std::isnan(tail)) return tail;
    }
    return log_gig_interval_integral(p_, chi_, psi_, lower_, s);
  }

  double p_, chi_, psi_, lower_;
  bool known_ = false;
  double known_s_ = 0.0, known_log_mass_ = 0.0;
};

// The GIG mode (gig.hpp), or 0 where the density increases towards s = 0.
double gig_mode(double p, double chi, double psi) {
  if (chi == 0.0) return p > 0.0 ? 2.0 * (p - 1.0 > 0.0 ? p - 1.0 : 0.0) / psi : 0.0;
  const double root = std::hypot(p - 1.0, std::sqrt(chi * psi));
  return p - 1.0 >= 0.0 ? (p - 1.0 + root) / psi : chi / (root - (p - 1.0));
}

// A start for log s where int_0^s f = e^target, from the left tail's leading term: in
// u = log s the integrand e^{phi(u)} falls off to the left at the rate phi'(u), so the mass
// below u is about e^{phi(u)} / phi'(u) when phi' is large. Returns `fallback` where the target
// is not in that tail.
double lower_tail_start(double p, double chi, double psi, double target, double fallback) {
  auto log_integrand = [&](double u) {
    return p * u - 0.5 * (chi * std::exp(-u) + psi * std::exp(u));
  };
  auto rate = [&](double u) { return p + 0.5 * (chi * std::exp(-u) - psi * std::exp(u)); };
  const double mode = gig_mode(p + 1.0, chi, psi);  // the mode of e^{phi(u)}
  if (!(mode > 0.0)) return fallback;
  double u = std::log(mode) - 1.0;
  for (int iteration = 0; iteration < 20; ++iteration) {
    const double slope = rate(u);
    if (!(slope > 2.0)) return fallback;
    const double excess = log_integrand(u) - std::log(slope) - target;
    if (std::fabs(excess) < 1e-3) return u;
    u -= std::clamp(excess / slope, -kMaxStep, kMaxStep);
  }
  return std::isfinite(u) ? u : fallback;
}

// A start for log(s - lower) from the Laplace approximation in u = log s (a normal at phi's
// mode with phi's curvature there), truncated at log lower; NaN where that normal puts w in a
// tail beyond 6 standard deviations (the tail starts do better there). The Newton steps then
// stay short, so the mass is carried by the narrow rule instead of a new integral.
double laplace_start(double p, double chi, double psi, double lower, double w) {
  const double mode = gig_mode(p + 1.0, chi, psi);  // the mode of e^{phi(u)}
  if (!(mode > 0.0) || !std::isfinite(mode)) return std::nan("");
  const double spread = 1.0 / std::sqrt(0.5 * (chi / mode + psi * mode));
  double fraction = w;
  if (lower > 0.0) {
    const double below = 0.5 * std::erfc(-(std::log(lower / mode) / spread) / std::sqrt(2.0));
    fraction = below + w * (1.0 - below);
  }
  if (!(fraction > 1e-9 && fraction < 1.0 - 1e-9)) return std::nan("");
  const double z = -std::sqrt(2.0) * boost::math::erfc_inv(2.0 * fraction);
  const double s = mode * std::exp(spread * z);
  return s > lower ? std::log(s - lower) : std::nan("");
}

// Solves h(x) = 0 for an increasing (direction = +1) or decreasing (-1) h by Newton steps kept
// inside the bracket the evaluations build; `evaluate` returns h(x) (-inf or +inf allowed where
// an integral under- or overflows) and writes h'(x). `indistinct(low, high)` says when two
// points of the bracket evaluate the same argument (s rounds to the same double), where h is a
// step function and no further step can help.
template <typename Evaluate, typename Indistinct>
double solve_monotone(double x, int direction, Evaluate evaluate, Indistinct indistinct) {
  double low = -kInfinity, high = kInfinity;
  for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
    double slope = 0.0;
    const double value = evaluate(x, slope);
    if (std::isnan(value)) break;
    if (std::fabs(value) <= kResidualTolerance) return x;
    // Below the root where direction * h < 0.
    if (direction * value < 0.0) {
      low = x;
    } else {
      high = x;
    }
    // Newton's step, at most kMaxStep log units (a flat start would throw it far away).
    double next = x - std::clamp(value / slope, -kMaxStep, kMaxStep);
    if (!std::isfinite(value) || !std::isfinite(next) || !(next > low && next < high)) {
      if (std::isfinite(low) && std::isfinite(high)) {
        next = 0.5 * (low + high);
      } else {
        next = std::isfinite(low) ? low + 2.0 : high - 2.0;
      }
    }
    if (std::fabs(next - x) <= kStepTolerance || indistinct(std::fmin(x, next), std::fmax(x, next)))
      return next;
    if (high - low <= kStepTolerance || indistinct(low, high)) return 0.5 * (low + high);
    x = next;
  }
  throw std::runtime_error("gig_truncated_quantile: no convergence");
}

}  // namespace

double log_gig_mass_beyond(double p, double chi, double psi, double lower) {
  if (lower > 0.0) {
    // The complete integral less a lower tail that the Laguerre rule gets cheaply (far below
    // the mode, where the tail is a small part of the whole).
    const double tail = log_gig_lower_tail_laguerre(p, chi, psi, lower);
    if (!std::isnan(tail)) {
      const double total = log_gig_normalizer(p, chi, psi);
      if (tail < total - 1.0) return total + std::log1p(-std::exp(tail - total));
    }
  }
  return log_gig_upper_integral(p, chi, psi, lower);
}

double gig_truncated_quantile(double p, double chi, double psi, double lower, double w) {
  return lower + gig_truncated_quantile_excess(p, chi, psi, lower, w,
                                               log_gig_mass_beyond(p, chi, psi, lower));
}

double gig_truncated_quantile_excess(double p, double chi, double psi, double lower, double w,
                                     double log_upper_mass) {
  if (!(w > 0.0 && w < 1.0)) {
    throw std::domain_error("gig_truncated_quantile: need w in (0, 1) (got " +
                            detail::number_text(w) + ")");
  }
  if (!(lower >= 0.0) || !std::isfinite(lower) || !std::isfinite(log_upper_mass)) {
    throw std::domain_error(
        "gig_truncated_quantile: need a finite lower bound >= 0 and a finite mass beyond it");
  }
  // Both equations are solved in y = log(s - lower): near the bound the mass from it behaves
  // like y + log f(lower), so Newton steps are near exact there, and a relative tolerance on
  // s - lower is what the race's clocks (lower - s)/2 need.
  const double at_lower = lower > 0.0 ? log_density(p, chi, psi, lower) : -kInfinity;
  const double mode = gig_mode(p, chi, psi);
  auto start_for = [&](double log_fraction) {
    // The mass from the bound as if the density stayed at f(lower), or the mode's distance.
    // Where f rises from the bound that overshoots; the mode is then not further away.
    const double to_mode = std::log(mode > lower ? mode - lower : 1.0);
    double start = std::isfinite(at_lower) ? log_fraction + log_upper_mass - at_lower : to_mode;
    if (mode > lower) start = std::fmin(start, to_mode);
    return std::isfinite(start) ? start : 0.0;
  };
  // s = lower + e^y is what the integrals see: once the bracket's ends round to neighbouring
  // doubles, s is determined.
  auto indistinct = [lower](double low, double high) {
    if (!std::isfinite(low) || !std::isfinite(high)) return false;
    const double s_low = lower + std::exp(low);
    return s_low > lower && std::nextafter(s_low, kInfinity) >= lower + std::exp(high);
  };
  double y;
  if (w <= 0.5) {
    // Mass from the bound: int_lower^s f = w M.
    const double target = std::log(w) + log_upper_mass;
    MassFromLower mass_from_lower(p, chi, psi, lower);
    double start = laplace_start(p, chi, psi, lower, w);
    if (std::isnan(start)) {
      start = start_for(std::log(w));
      if (lower == 0.0) start = lower_tail_start(p, chi, psi, target, start);
    }
    y = solve_monotone(
        start, +1,
        [&](double y, double& slope) {
          const double s = lower + std::exp(y);
          if (!(s > lower)) return -kInfinity;
          const double log_mass = mass_from_lower(s);
          slope = std::exp(y + log_density(p, chi, psi, s) - log_mass);
          return log_mass - target;
        },
        indistinct);
  } else {
    // Mass beyond: int_s^inf f = (1 - w) M.
    const double target = std::log1p(-w) + log_upper_mass;
    y = solve_monotone(
        start_for(std::log(0.5)), -1,
        [&](double y, double& slope) {
          const double s = lower + std::exp(y);
          if (!(s > lower)) return log_upper_mass - target;
          const double log_mass = log_gig_upper_integral(p, chi, psi, s);
          slope = -std::exp(y + log_density(p, chi, psi, s) - log_mass);
          return log_mass - target;
        },
        indistinct);
  }
  // Where s - lower is below the resolution of lower, report the excess s carries.
  const double excess = std::exp(y);
  const double rounded = (lower + excess) - lower;
  return excess < 1e3 * (std::nextafter(lower, kInfinity) - lower) && rounded > 0.0 ? rounded
                                                                                    : excess;
}

}  // namespace kingman::kernels
