#pragma once
// A safeguarded Newton iteration for a root bracketed by a sign change.
#include <algorithm>
#include <cmath>
#include <limits>

namespace kingman::detail {

// Root of f on [lo, hi] with f(lo) < 0 <= f(hi), f(x, df) returning f and its derivative:
// Newton steps while they stay inside the shrinking bracket and at least halve the step before
// last, bisection otherwise (Numerical Recipes' rtsafe), so it converges whatever the shape.
// Stops when the Newton correction or the bracket is below 4 ulp of max(1, |x|).
template <class F>
double bracketed_root(F&& f, double lo, double hi) {
  constexpr double kTolerance = 4.0 * std::numeric_limits<double>::epsilon();
  constexpr int kMaxIterations = 200;
  double x = 0.5 * (lo + hi);
  double step = hi - lo, step_before = step;
  double df = 0.0;
  double fx = f(x, df);
  for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
    if (fx == 0.0) return x;
    (fx < 0.0 ? lo : hi) = x;
    const double newton = fx / df;
    const double scale = kTolerance * std::max(1.0, std::abs(x));
    // Converged: the Newton correction is below the resolution of x (tested before the bracket,
    // whose end may coincide with x after rounding).
    if (df > 0.0 && std::abs(newton) <= scale) return std::clamp(x - newton, lo, hi);
    double next = x - newton;
    const bool newton_usable = std::isfinite(newton) && df > 0.0 && next > lo && next < hi &&
                               std::abs(newton) <= 0.5 * std::abs(step_before);
    step_before = step;
    if (newton_usable) {
      step = newton;
    } else {
      next = 0.5 * (lo + hi);
      step = next - x;
    }
    if (hi - lo <= scale) return next;
    x = next;
    fx = f(x, df);
  }
  return x;
}

}  // namespace kingman::detail
