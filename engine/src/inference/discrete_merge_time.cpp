#include "kingman/inference/discrete_merge_time.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "discrete_merge_time_per_column.hpp"

namespace kingman {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One rate lambda: in x = e^{lambda (2t - t_l - t_r)} in (0, x_max] the slope of the objective
// has the sign of beta - h(x), with beta = rate / (2 lambda) and h(x) = sum_d A_d x / Z^d,
// Z^d = 1 - A_d x = (1 - x) + x S_d. Each term of h is convex in x wherever Z^d > 0 (its second
// derivative is 2 A_d^2 / (Z^d)^3), so g = h - beta is convex with g(0) = -beta < 0: it
// crosses zero at most once, with a positive slope there, and the objective is unimodal.
// Working in x rather than in log x needs no exp per evaluation, only one division per column.
// The root is found by Halley steps (cubic convergence: g'' costs one more multiply-add per
// column) from the root of h's second-order expansion A1 x + A2 x^2 = beta (A1 = sum A_d,
// A2 = sum A_d^2), safeguarded by bisection of a bracket that every evaluation shrinks, and
// stopped once Halley's error estimate is below the resolution: typically 3 evaluations in all,
// where a Newton iteration in log x from the bracket's middle took 7.6.

// A point x of (0, 1] held as x and u = 1 - x, each to its own relative precision: the
// smaller of the two is the one stepped (a step of x by -dx moves u by +dx), and the other is
// 1 minus it, with no rounding where that is at least 1/2. So merge times very close to the
// boundary (u tiny), where x alone would resolve log x only to 1e-16, keep their relative
// precision, as they did when the search ran in log x.
struct Point {
  double x, u;

  static Point from_x(double x) { return {x, 1.0 - x}; }
  static Point from_u(double u) { return {1.0 - u, u}; }
  static Point from_log(double y) {  // x = e^y, one libm call
    return y > -0.5 ? from_u(-std::expm1(y)) : from_x(std::exp(y));
  }
  bool by_x() const { return x <= 0.5; }
  double stepped() const { return by_x() ? x : u; }
  Point moved(double dx) const { return by_x() ? from_x(x - dx) : from_u(u + dx); }
  double log() const { return by_x() ? std::log(x) : std::log1p(-u); }
  bool below(const Point& other) const {  // x < other.x, compared in the precise coordinates
    if (by_x() != other.by_x()) return by_x();
    return by_x() ? x < other.x : u > other.u;
  }
  static Point middle(const Point& a, const Point& b) {
    return !a.by_x() && !b.by_x() ? from_u(0.5 * (a.u + b.u)) : from_x(0.5 * (a.x + b.x));
  }
};

// g, g', g''/2 and g'''/6 at one x; g = +inf where some Z^d <= 0 (only at the boundary).
struct Excess {
  double value = 0.0, slope = 0.0, half_curvature = 0.0, third = 0.0;
};

Excess excess_at(const DiscretePair& pair, double beta, const Point& at) {
  double h = 0.0, slope = 0.0, half_curvature = 0.0, third = 0.0;
  for (std::size_t k = 0; k < pair.shared_columns(); ++k) {
    const double s = pair.overlap(k);
    const double z = at.u + at.x * s;
    if (!(z > 0.0)) return {kInf, kInf, kInf, kInf};
    const double inverse = 1.0 / z;
    const double w = (1.0 - s) * inverse;  // A_d / Z^d
    const double w_inverse = w * inverse;  // A_d / (Z^d)^2
    slope += w_inverse;
    half_curvature += w * w_inverse;
    third += w * w * w_inverse;
    h += w;
  }
  return {at.x * h - beta, slope, half_curvature, third};
}

double common_rate_optimum(const DiscretePair& pair, double rate) {
  const double lambda = pair.rate(0);
  const double beta = rate / (2.0 * lambda);
  double disagreement = 0.0, first = 0.0, second = 0.0;
  for (std::size_t k = 0; k < pair.shared_columns(); ++k) {
    const double a = 1.0 - pair.overlap(k);
    disagreement += std::max(0.0, a);
    first += a;
    second += a * a;
  }
  // Without a disagreeing column h <= 0 < beta: the objective rises up to the boundary.
  if (!(disagreement > 0.0)) return pair.latest_time();
  const Point top = Point::from_log(lambda * (2.0 * pair.latest_time() - pair.time_sum()));
  // For x <= 1/2 each term with A_d > 0 is at most 2 A_d x (and A_d <= 1), others are negative,
  // so h(x) <= beta / 2 at x = beta / (4 sum_{A_d > 0} A_d): g < 0 up to this lower end.
  Point lo = Point::from_x(std::min(0.5, beta / (4.0 * disagreement)));
  if (!lo.below(top)) return pair.latest_time();
  // The positive root of second x^2 + first x = beta (second > 0 here), without cancellation.
  const double expansion_root =
      2.0 * beta / (first + std::sqrt(first * first + 4.0 * second * beta));
  Point at = top;
  if (Point::from_x(expansion_root).below(top)) at = Point::from_x(std::max(expansion_root, lo.x));
  Excess g = excess_at(pair, beta, at);
  Point hi = top;
  if (g.value < 0.0) {
    // The root, if any, lies right of the start. A Newton step overshoots it (the tangent of
    // the convex g lies below g, so g >= 0 where the tangent is 0): if that lands before the
    // boundary it brackets the root without evaluating g there.
    lo = at;
    const Point newton = at.moved(g.value / g.slope);
    if (g.slope > 0.0 && newton.below(top)) {
      at = newton;
      g = excess_at(pair, beta, at);
    } else if (!at.below(top) || excess_at(pair, beta, top).value <= 0.0) {
      return pair.latest_time();  // still rising at the boundary
    }
  }
  constexpr double kTolerance = 4.0 * std::numeric_limits<double>::epsilon();
  for (int iteration = 0; iteration < 200; ++iteration) {
    if (g.value == 0.0) break;
    (g.value < 0.0 ? lo : hi) = at;
    // Halley: x - n / (1 - c2 n) with the Newton step n = g / g' and c2 = g'' / 2g'.
    const double inverse_slope = 1.0 / g.slope;
    const double c2 = g.half_curvature * inverse_slope, c3 = g.third * inverse_slope;
    const double newton = g.value * inverse_slope;
    const double step = newton / (1.0 - c2 * newton);
    // Converged: the step is below the resolution of the stepped coordinate (tested before the
    // bracket, whose end may be this point itself after rounding), or Halley's error after it,
    // (c2^2 - c3) step^3 with c3 = g''' / 6g', is; the second only where the step is small
    // against g's scales of change (|c2 step| and |c3| step^2 below 1e-3), so that the cubic
    // term leads the error.
    const double resolution = kTolerance * at.stepped();
    const double step_squared = step * step;
    if (std::abs(step) <= resolution ||
        (std::abs(c2 * step) < 1e-3 && std::abs(c3) * step_squared < 1e-6 &&
         std::abs((c2 * c2 - c3) * step_squared * step) <= 0.25 * resolution)) {
      const Point last = at.moved(step);
      at = last.below(lo) ? lo : hi.below(last) ? hi : last;
      break;
    }
    Point next = at.moved(step);
    if (!(std::isfinite(step) && lo.below(next) && next.below(hi))) next = Point::middle(lo, hi);
    at = next;
    if (!(lo.below(at) && at.below(hi))) break;  // the bracket holds no other double
    g = excess_at(pair, beta, at);
  }
  return std::min(pair.latest_time(), 0.5 * (at.log() / lambda + pair.time_sum()));
}

}  // namespace

double optimal_merge_time(const DiscretePair& pair, double rate) {
  if (pair.shared_columns() == 0) return pair.latest_time();
  return pair.common_rate() ? common_rate_optimum(pair, rate)
                            : detail::per_column_rate_optimum(pair, rate);
}

}  // namespace kingman
