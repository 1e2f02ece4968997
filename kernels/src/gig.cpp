#include "kingman/kernels/gig.hpp"

#include <algorithm>
#include <array>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "kingman/kernels/log_bessel_k.hpp"
#include "number_text.hpp"
#include "simd_copies.hpp"
#include "vector_math_detail.hpp"

namespace kingman::kernels {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Integration windows end where phi is this far below its maximum: the mass beyond is below
// e^-50 * (window width / 50) relative, far under the 1e-13 the quadrature delivers.
constexpr double kWindowDrop = 50.0;
// Root tolerance (in units of phi) for the window ends: where exactly they fall hardly matters.
constexpr double kWindowDropTolerance = 0.5;
// The sampler's envelope switches from flat to exponential where phi is 1 below its maximum.
constexpr double kEnvelopeDrop = 1.0;
constexpr double kEnvelopeDropTolerance = 0.02;
// Gauss-Kronrod: the error estimate |K41 - G20| bounds the Gauss rule's error, so the Kronrod
// result it accepts is far more accurate than this tolerance.
constexpr double kQuadratureTolerance = 1e-11;
constexpr std::size_t kQuadratureMaxPanels = 200;

void check_parameters(double p, double chi, double psi, const char* caller) {
  if (!std::isfinite(p) || !(chi >= 0.0) || !std::isfinite(chi) || !(psi > 0.0) ||
      !std::isfinite(psi)) {
    throw std::domain_error(
        std::string(caller) +
        ": need finite p, chi >= 0 and psi > 0 (got p = " + detail::number_text(p) +
        ", chi = " + detail::number_text(chi) + ", psi = " + detail::number_text(psi) + ")");
  }
}

// A point in both scales: u = log s and s itself. s is kept (not recomputed as exp(u)) so that
// chi / s and psi s are accurate to an ulp: through exp(log chi - u) they would carry an error
// of |u| ulps, ~1e-12 of a term of size 1e3 at u = -25. s = 0 marks "not representable as a
// normal double" (then only u is used).
struct Point {
  double log_s;
  double s;
};

Point point_from_s(double s) {
  return {std::log(s), std::isnormal(s) ? s : 0.0};
}

Point point_from_log(double log_s) {
  const double s = std::exp(log_s);
  return {log_s, std::isnormal(s) ? s : 0.0};
}

// The GIG mode, the maximum of phi(u) = p u - (chi e^-u + psi e^u)/2: the root of
// psi s^2 - 2 p s - chi = 0, written without cancellation for either sign of p. u = -inf when
// chi = 0 and p <= 0 (phi increases towards u = -inf).
Point gig_mode(double p, double chi, double psi) {
  if (chi == 0.0) {
    if (p <= 0.0) return {-kInfinity, 0.0};
    const double s = 2.0 * p / psi;
    return std::isnormal(s) ? point_from_s(s) : point_from_log(std::log(2.0 * p) - std::log(psi));
  }
  const double root = std::hypot(p, std::sqrt(chi) * std::sqrt(psi));
  const double s = p >= 0.0 ? (p + root) / psi : chi / (root - p);
  if (std::isnormal(s) && std::isfinite(s)) return point_from_s(s);
  return point_from_log(p >= 0.0 ? std::log(p + root) - std::log(psi)
                                 : std::log(chi) - std::log(root - p));
}

// The mode clamped to [lower, upper] (given in both scales): phi's maximum there.
Point clamp(Point mode, Point lower, Point upper) {
  if (mode.log_s <= lower.log_s) return lower;
  if (mode.log_s >= upper.log_s) return upper;
  return mode;
}

Point clamped_mode(double p, double chi, double psi, Point lower, Point upper) {
  return clamp(gig_mode(p, chi, psi), lower, upper);
}

// phi around a reference point c, in w = u - c:
//   offset(w) = phi(c + w) - phi(c) = p w - (A expm1(-w) + B expm1(w)) / 2,
// with A = chi e^-c and B = psi e^c. Through expm1 it keeps full relative precision near w = 0
// even when A or B are huge, where phi itself would lose everything to cancellation.
struct Shape {
  double p;
  double a;          // chi e^-c
  double b;          // psi e^c
  double log_value;  // phi(c)

  Shape(double p_, double chi, double psi, Point c) : p(p_) {
    if (c.s > 0.0) {
      a = chi / c.s;
      b = psi * c.s;
    } else {
      a = chi > 0.0 ? std::exp(std::log(chi) - c.log_s) : 0.0;
      b = std::exp(std::log(psi) + c.log_s);
    }
    log_value = p * c.log_s - 0.5 * (a + b);
  }
  // offset(w) and its slope, from one evaluation of e^{+-w} and expm1(+-w) (exp_pair).
  void evaluate(double w, double& value, double& derivative) const noexcept {
    detail::ExpPair e;
    if (std::fabs(w) <= 700.0) {
      e = detail::exp_pair(w);
    } else {  // beyond exp_pair's range: libm's overflow and underflow behaviour
      e = {std::exp(w), std::exp(-w), std::expm1(w), std::expm1(-w)};
    }
    value = p * w - 0.5 * b * e.expm1_plus;
    derivative = p - 0.5 * b * e.exp_plus;
    if (a > 0.0) {
      value -= 0.5 * a * e.expm1_minus;
      derivative += 0.5 * a * e.exp_minus;
    }
  }
  double offset(double w) const noexcept {
    double value, derivative;
    evaluate(w, value, derivative);
    return value;
  }
  double slope(double w) const noexcept {
    double value, derivative;
    evaluate(w, value, derivative);
    return derivative;
  }
};

struct Drop {
  double distance;   // >= 0, from the reference
  bool at_boundary;  // the interval ended before phi dropped by `level`
};

// Closed-form upper bounds on the distance t >= 0 along `direction` (+1 or -1) from the
// reference, which must be the maximum of phi on this side, at which offset first falls to
// -level: from offset(sign t) <= -g t - K (e^t - 1 - t) / 2, where g is the descent rate at 0
// and K = B (right) or A (left) bounds the curvature from below; and from offset <= -|p| t +
// K'/2 when p points away from this side. (The slope at 0 is p - B/2 + A/2: e^0 = 1.) Each
// applicable bound goes to `visit`, the cheapest first (the square root and log1p last), until
// it returns false.
template <typename Visit>
void visit_drop_bounds(const Shape& shape, int direction, double level, const Visit& visit) {
  const double sign = direction;
  const double slope_at_zero = shape.p - 0.5 * shape.b + (shape.a > 0.0 ? 0.5 * shape.a : 0.0);
  const double descent = std::max(0.0, -sign * slope_at_zero);
  const double curvature = direction > 0 ? shape.b : shape.a;
  if (descent > 0.0 && !visit(level / descent)) return;
  if (direction > 0 && shape.p < 0.0 && !visit((level + 0.5 * shape.a) / -shape.p)) return;
  if (direction < 0 && shape.p > 0.0 && !visit((level + 0.5 * shape.b) / shape.p)) return;
  if (curvature > 0.0) {
    const double y = 2.0 * level / curvature;  // need e^t - 1 - t >= y
    const double quadratic = std::sqrt(2.0 * y);
    // 2 + log1p(y) >= 2 can be the smaller bound only where the quadratic one exceeds 2: a
    // larger bound changes neither a minimum nor a "limit <= every bound" test, so it is skipped.
    if (visit(quadratic) && quadratic > 2.0) visit(2.0 + std::log1p(y));
  }
}

// The smallest of those bounds; infinite only where nothing bounds the side.
double drop_bound(const Shape& shape, int direction, double level) {
  double bound = kInfinity;
  visit_drop_bounds(shape, direction, level, [&](double candidate) {
    bound = std::min(bound, candidate);
    return true;
  });
  return bound;
}

// limit <= drop_bound(shape, direction, level), evaluating the bounds only as far as they
// decide it: far-away limits, like the upper integrals' infinite right end, fail on the first
// finite one.
bool within_drop_bound(const Shape& shape, int direction, double level, double limit) {
  bool within = true;
  visit_drop_bounds(shape, direction, level, [&](double candidate) {
    within = limit <= candidate;
    return within;
  });
  return within;
}

// Whether the interval ends (at distance `limit`, possibly inf) before the offset falls to
// -level on this side. One evaluation of the offset at most: no root is needed to tell, which
// is all that find_window needs where the interval holds the whole window.
bool drop_reaches_end(const Shape& shape, int direction, double level, double limit) {
  const double sign = direction;
  return within_drop_bound(shape, direction, level, limit) &&
         (limit == 0.0 || shape.offset(sign * limit) + level >= 0.0);
}

// The root of the drop (find_drop) in (0, high], high finite with the offset at or below
// -level there.
double drop_root(const Shape& shape, int direction, double level, double high, double tolerance) {
  if (!std::isfinite(high)) {
    // Unreachable for valid parameters (B > 0 always bounds the right side; the left side is
    // bounded by A > 0, by p > 0, or by a finite interval end).
    throw std::logic_error("find_drop: no bound on the integration window");
  }
  const double sign = direction;
  double low = 0.0;
  double f, derivative;  // value(t) and its derivative in t
  auto evaluate = [&](double at) {
    shape.evaluate(sign * at, f, derivative);
    f += level;
    derivative *= sign;
  };
  // Newton starts from the drop of the local quadratic model, descent t + curvature t^2 / 2 =
  // level (descent and curvature of the offset at 0), where that lies inside the bracket: for
  // the near-Gaussian peaks of high-dimensional pairs it is within the tolerance already, where
  // Newton from `high` took several steps. Either side of the root is fine: Newton from below
  // overshoots once (the offset is concave), and the bracket keeps every step inside.
  const double descent = std::max(0.0, -sign * (shape.p - 0.5 * shape.b + 0.5 * shape.a));
  const double curvature = 0.5 * (shape.a + shape.b);
  const double start =
      2.0 * level / (descent + std::sqrt(descent * descent + 2.0 * level * curvature));
  double t = start > 0.0 && start < high ? start : high;
  evaluate(t);
  if (t < high) {
    if (f > 0.0) {
      low = t;
    } else {
      high = t;
    }
  }
  for (int iteration = 0; iteration < 200; ++iteration) {
    if (std::fabs(f) <= tolerance || high - low <= 1e-12 * std::max(1.0, high)) break;
    double next = t - f / derivative;
    // Bisect when Newton leaves the bracket, fails, or would shrink it too slowly (far out on
    // a double-exponential flank Newton moves by ~1 per step).
    if (!std::isfinite(next) || next <= low || next >= high ||
        (f < 0.0 && next > 0.5 * (low + high) && high - low > 4.0)) {
      next = 0.5 * (low + high);
    }
    t = next;
    evaluate(t);
    if (f > 0.0) {
      low = t;
    } else {
      high = t;
    }
  }
  return t;
}

// The distance t >= 0 along `direction` from the reference at which offset first falls to
// -level; or `limit` (the distance to the interval's end, possibly inf) if the offset is still
// above -level there (drop_reaches_end). Brackets the root between 0 and the nearer of the
// limit and drop_bound, then Newton with bisection as a safeguard. On a concave decreasing
// function Newton steps from the far end of the bracket never overshoot.
Drop find_drop(const Shape& shape, int direction, double level, double limit, double tolerance) {
  if (drop_reaches_end(shape, direction, level, limit)) return {limit, true};
  const double bound = drop_bound(shape, direction, level);
  const double high = limit <= bound ? limit : bound;
  return {drop_root(shape, direction, level, high, tolerance), false};
}

// The part of [lower, upper] (in u = log s) that matters: the reference (phi's maximum there)
// and the window around it. `covers_everything` when the interval contains the whole window
// (then left and right are not computed).
struct Window {
  Shape shape;
  double left;  // window is [reference - left, reference + right]
  double right;
  double reference;
  bool covers_everything;
};

// `mode` is gig_mode(p, chi, psi).
Window find_window(double p, double chi, double psi, Point mode, Point lower, Point upper) {
  const Point reference = clamp(mode, lower, upper);
  Shape shape(p, chi, psi, reference);
  const double left_limit = reference.log_s - lower.log_s;
  const double right_limit = upper.log_s - reference.log_s;
  const bool left_end = drop_reaches_end(shape, -1, kWindowDrop, left_limit);
  const bool right_end = drop_reaches_end(shape, +1, kWindowDrop, right_limit);
  // The window's ends are needed only where the interval cuts it (PostPost's pairs mostly have
  // r_C far below the mode: their masses are complete integrals).
  if (!left_end && !right_end) return {shape, 0.0, 0.0, reference.log_s, true};
  auto end = [&](int direction, double limit, bool reached) {
    if (reached) return limit;
    return drop_root(shape, direction, kWindowDrop,
                     std::min(limit, drop_bound(shape, direction, kWindowDrop)),
                     kWindowDropTolerance);
  };
  return {shape, end(-1, left_limit, left_end), end(+1, right_limit, right_end), reference.log_s,
          false};
}

// Globally adaptive Gauss-Kronrod (G20/K41, as QUADPACK's QAG): split the panel with the
// largest error estimate until the estimates sum to below `relative_tolerance` times the
// integral. |K41 - G20| bounds the Gauss rule's error, so it grossly overstates the Kronrod
// rule's: the result is far more accurate than the tolerance. (Boost 1.74's own adaptive
// driver compares errors measured on [-1, 1] with tolerances measured on [a, b], so on narrow
// windows it always splits to its maximum depth; only its single-panel rule is used here.)
struct Panel {
  double a, b, integral, error;
};

// exp(offset(w)) of `shape` at count points with |w| <= 700 (Shape::offset, vectorized: expm1 of
// both signs and exp by the array kernels' methods, so a panel's 41 integrand values cost a few
// SIMD passes instead of 93 libm calls). Values below e^-708 are 0, far under what the panel
// resolves.
struct ExpOffsetsKernel {
  template <std::size_t>
  [[gnu::always_inline]] static void run(double p, double a, double b, const double* w, double* out,
                                         std::size_t count) {
    for (std::size_t k = 0; k < count; ++k) {
      const detail::ExpPair e = detail::exp_pair(w[k]);
      const double left_term = a > 0.0 ? a * e.expm1_minus : 0.0;  // a = 0: no chi term (0 * inf)
      out[k] = detail::exp_or_zero(p * w[k] - 0.5 * (b * e.expm1_plus + left_term));
    }
  }
};

void exp_offsets(double p, double a, double b, const double* w, double* out, std::size_t count) {
  detail::run_in_copy<ExpOffsetsKernel>(p, a, b, w, out, count);
}

// One G20/K41 panel of exp(shape.offset(w)) over [a, b] with Boost's nodes and weights, the 41
// integrand values computed together by exp_offsets. (Boost lists the abscissae from 0 upwards;
// G20 has no node at 0 and uses the odd-numbered Kronrod abscissae.)
Panel offset_panel(const Shape& shape, double a, double b) {
  using Kronrod = boost::math::quadrature::gauss_kronrod<double, 41>;
  using Gauss = boost::math::quadrature::gauss<double, 20>;
  const auto& nodes = Kronrod::abscissa();
  const auto& kronrod_weights = Kronrod::weights();
  const auto& gauss_weights = Gauss::weights();
  constexpr std::size_t kNodes = 21;  // 0 and 20 positive abscissae (each used with both signs)
  const double middle = 0.5 * (a + b);
  const double half_width = 0.5 * (b - a);
  // points[0] = middle, points[2i - 1] = middle + h x_i, points[2i] = middle - h x_i.
  // Padded with copies of the middle to a multiple of eight, so that every value comes from the
  // SIMD loop of exp_offsets (the same operations as its scalar remainder, so the same bits):
  // 42 values left two to the scalar remainder, which cost more than the six padding lanes.
  constexpr std::size_t kPadded = (2 * kNodes + 7) / 8 * 8;
  double points[kPadded], values[kPadded];
  points[0] = middle;
  for (std::size_t i = 1; i < kNodes; ++i) {
    points[2 * i - 1] = middle + half_width * nodes[i];
    points[2 * i] = middle - half_width * nodes[i];
  }
  for (std::size_t k = 2 * kNodes - 1; k < kPadded; ++k) points[k] = middle;
  exp_offsets(shape.p, shape.a, shape.b, points, values, kPadded);
  for (std::size_t k = 0; k < 2 * kNodes; ++k) {
    // exp_pair's range ends at |w| = 708; beyond it (only far-reaching flat flanks get there)
    // the scalar form with libm's overflow and underflow.
    if (std::fabs(points[k]) > 700.0) values[k] = std::exp(shape.offset(points[k]));
  }
  double kronrod = values[0] * kronrod_weights[0];
  double gauss = 0.0;
  for (std::size_t i = 1; i < kNodes; ++i) {
    const double pair = values[2 * i - 1] + values[2 * i];
    kronrod += pair * kronrod_weights[i];
    if (i % 2 == 1) gauss += pair * gauss_weights[i / 2];
  }
  const double unit_error = std::max(
      std::abs(kronrod - gauss), std::abs(kronrod * 2.0 * std::numeric_limits<double>::epsilon()));
  return {a, b, half_width * kronrod, half_width * unit_error};
}

// `panel(a, b)` integrates over one panel and estimates its error. Starts from the given
// partition `edges` (at least two, increasing, at most kQuadratureMaxPanels + 1).
template <typename PanelRule>
double adaptive_integral(const PanelRule& panel, const double* edges, std::size_t edge_count,
                         double relative_tolerance) {
  std::array<Panel, kQuadratureMaxPanels> panels;
  std::size_t count = 0;
  for (std::size_t i = 0; i + 1 < edge_count; ++i) panels[count++] = panel(edges[i], edges[i + 1]);
  double integral = 0.0, error = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    integral += panels[i].integral;
    error += panels[i].error;
  }
  while (error > relative_tolerance * integral && count < panels.size()) {
    std::size_t worst = 0;
    for (std::size_t i = 1; i < count; ++i) {
      if (panels[i].error > panels[worst].error) worst = i;
    }
    const Panel split = panels[worst];
    const double middle = 0.5 * (split.a + split.b);
    panels[worst] = panel(split.a, middle);
    panels[count++] = panel(middle, split.b);
    integral = 0.0;  // re-summed each time: no drift from adding and subtracting
    error = 0.0;
    for (std::size_t i = 0; i < count; ++i) {
      integral += panels[i].integral;
      error += panels[i].error;
    }
  }
  return integral;
}

// log of the integral of exp(offset) over [-left, right] (the integrand is at most 1 = its
// value at 0, and the window holds all but ~e^-50 of its mass).
double log_window_integral(const Shape& shape, double left, double right) {
  // The first partition: each side of the peak in panels of at most kPanelScales times the
  // peak's scale sigma = (-offset''(0))^-1/2 = (2 / (A + B))^1/2. A side that falls by 50 like
  // a Gaussian spans ~10 sigma, which one G20/K41 panel resolves to the tolerance; flatter sides
  // (heavy flanks spanning many sigma) start with more panels. Measured on MPost2 runs
  // (bench/RESULTS.md): G15/K31 on panels of 6 sigma took 80 integrand values per integral and
  // G20/K41 on 20 sigma 57, both without any refinement; with G7/K15 or G10/K21 the refinement
  // split so often that they took more.
  constexpr double kPanelScales = 20.0;
  constexpr std::size_t kMostPanelsPerSide = 4;
  const double sigma = std::sqrt(2.0 / (shape.a + shape.b));
  auto panels_for = [&](double length) {
    const double wanted = std::ceil(length / (kPanelScales * sigma));
    return wanted >= 1.0 ? std::min(kMostPanelsPerSide, static_cast<std::size_t>(wanted)) : 1;
  };
  double edges[2 * kMostPanelsPerSide + 1];
  std::size_t edge_count = 0;
  if (left > 0.0) {
    const std::size_t n = panels_for(left);
    for (std::size_t i = 0; i < n; ++i)
      edges[edge_count++] = -left + left * static_cast<double>(i) / static_cast<double>(n);
  }
  edges[edge_count++] = 0.0;
  if (right > 0.0) {
    const std::size_t n = panels_for(right);
    for (std::size_t i = 1; i <= n; ++i)
      edges[edge_count++] = right * static_cast<double>(i) / static_cast<double>(n);
  }
  return std::log(
      adaptive_integral([&shape](double a, double b) { return offset_panel(shape, a, b); }, edges,
                        edge_count, kQuadratureTolerance));
}

}  // namespace

double log_gig_normalizer(double p, double chi, double psi) {
  check_parameters(p, chi, psi, "log_gig_normalizer");
  if (chi == 0.0) {
    return p > 0.0 ? boost::math::lgamma(p) + p * (std::numbers::ln2 - std::log(psi)) : kInfinity;
  }
  const double z = std::sqrt(chi) * std::sqrt(psi);
  return std::numbers::ln2 + 0.5 * p * (std::log(chi) - std::log(psi)) + log_bessel_k(p, z);
}

double log_gig_interval_integral(double p, double chi, double psi, double lower, double upper) {
  check_parameters(p, chi, psi, "log_gig_interval_integral");
  if (!(lower >= 0.0) || !(upper >= lower)) {
    throw std::domain_error("log_gig_interval_integral: need 0 <= lower <= upper (got " +
                            detail::number_text(lower) + ", " + detail::number_text(upper) + ")");
  }
  if (lower == upper) return -kInfinity;
  if (lower == 0.0 && chi == 0.0 && p <= 0.0) return kInfinity;  // diverges at 0
  const Window window =
      find_window(p, chi, psi, gig_mode(p, chi, psi), point_from_s(lower), point_from_s(upper));
  if (window.covers_everything) return log_gig_normalizer(p, chi, psi);
  return window.shape.log_value + log_window_integral(window.shape, window.left, window.right);
}

double log_gig_upper_integral(double p, double chi, double psi, double r) {
  if (r == 0.0) return log_gig_normalizer(p, chi, psi);
  return log_gig_interval_integral(p, chi, psi, r, kInfinity);
}

double log_gig_lower_integral(double p, double chi, double psi, double r) {
  return log_gig_interval_integral(p, chi, psi, 0.0, r);
}

namespace {

// log_gig_upper_integral_scaled with the mode given and the normalizer from `log_normalizer()`
// (called only where the interval holds the whole window).
template <typename Normalizer>
double upper_integral_scaled(double p, double chi, double psi, Point mode, Point at,
                             const Normalizer& log_normalizer) {
  const Window window = find_window(p, chi, psi, mode, at, point_from_s(kInfinity));
  const Shape at_r(p, chi, psi, at);
  if (window.covers_everything) return log_normalizer() - at_r.log_value;
  // phi(reference) - phi(log r) through the expm1 form, then the window integral.
  return at_r.offset(window.reference - at.log_s) +
         log_window_integral(window.shape, window.left, window.right);
}

void check_lower_limit(double r) {
  if (!(r > 0.0) || !std::isfinite(r)) {
    throw std::domain_error("log_gig_upper_integral_scaled: need finite r > 0 (got " +
                            detail::number_text(r) + ")");
  }
}

}  // namespace

double log_gig_upper_integral_scaled(double p, double chi, double psi, double r) {
  check_parameters(p, chi, psi, "log_gig_upper_integral_scaled");
  check_lower_limit(r);
  return upper_integral_scaled(p, chi, psi, gig_mode(p, chi, psi), point_from_s(r),
                               [&] { return log_gig_normalizer(p, chi, psi); });
}

GigUpperTail::Core GigUpperTail::core(double p, double chi, double psi) {
  check_parameters(p, chi, psi, "GigUpperTail");
  const Point mode = gig_mode(p, chi, psi);
  return {mode.log_s, mode.s, log_gig_normalizer(p, chi, psi)};
}

double GigUpperTail::log_scaled(double r, double log_r) const {
  check_lower_limit(r);
  // point_from_s(r), with its log from the caller.
  const Point at{log_r, std::isnormal(r) ? r : 0.0};
  return upper_integral_scaled(p_, chi_, psi_, Point{core_.mode_log_s, core_.mode_s}, at,
                               [this] { return core_.log_normalizer; });
}

double GigUpperTail::log_scaled(double r) const {
  return log_scaled(r, std::log(r));
}

TruncatedGigSampler::TruncatedGigSampler(double p, double chi, double psi, double lower,
                                         double upper)
    : p_(p), lower_(lower), upper_(upper) {
  check_parameters(p, chi, psi, "TruncatedGigSampler");
  if (!(lower >= 0.0) || !(upper > lower)) {
    throw std::domain_error("TruncatedGigSampler: need 0 <= lower < upper (got " +
                            detail::number_text(lower) + ", " + detail::number_text(upper) + ")");
  }
  if (lower == 0.0 && chi == 0.0 && p <= 0.0) {
    throw std::domain_error(
        "TruncatedGigSampler: chi = 0 with p <= 0 is improper near s = 0 (p = " +
        detail::number_text(p) + ")");
  }
  const Point lower_point = point_from_s(lower);
  const Point upper_point = point_from_s(upper);
  const Point mode = clamped_mode(p, chi, psi, lower_point, upper_point);
  mode_ = mode.log_s;
  const Shape shape(p, chi, psi, mode);
  chi_scaled_ = shape.a;
  psi_scaled_ = shape.b;
  const double left_limit = mode_ - lower_point.log_s;
  const double right_limit = upper_point.log_s - mode_;
  const Drop left = find_drop(shape, -1, kEnvelopeDrop, left_limit, kEnvelopeDropTolerance);
  const Drop right = find_drop(shape, +1, kEnvelopeDrop, right_limit, kEnvelopeDropTolerance);
  left_width_ = left.distance;
  right_width_ = right.distance;
  middle_mass_ = left_width_ + right_width_;

  left_mass_ = right_mass_ = 0.0;
  left_value_ = right_value_ = 0.0;
  left_slope_ = right_slope_ = 0.0;
  left_fraction_ = right_fraction_ = 0.0;
  if (!left.at_boundary) {
    left_value_ = shape.offset(-left_width_);
    left_slope_ = shape.slope(-left_width_);  // > 0 by concavity
    const double length = left_limit - left_width_;
    left_fraction_ = std::isinf(length) ? 1.0 : -std::expm1(-left_slope_ * length);
    left_mass_ = std::exp(left_value_) * left_fraction_ / left_slope_;
  }
  if (!right.at_boundary) {
    right_value_ = shape.offset(right_width_);
    right_slope_ = shape.slope(right_width_);  // < 0 by concavity
    const double length = right_limit - right_width_;
    right_fraction_ = std::isinf(length) ? 1.0 : -std::expm1(right_slope_ * length);
    right_mass_ = std::exp(right_value_) * right_fraction_ / -right_slope_;
  }
}

double TruncatedGigSampler::log_density_offset(double w) const noexcept {
  double plus, minus;
  if (std::fabs(w) <= 700.0) {
    const detail::ExpPair e = detail::exp_pair(w);
    plus = e.expm1_plus;
    minus = e.expm1_minus;
  } else {
    plus = std::expm1(w);
    minus = std::expm1(-w);
  }
  double value = p_ * w - 0.5 * psi_scaled_ * plus;
  if (chi_scaled_ > 0.0) value -= 0.5 * chi_scaled_ * minus;
  return value;
}

double TruncatedGigSampler::operator()(RandomStream& stream) const {
  const double total = left_mass_ + middle_mass_ + right_mass_;
  for (;;) {
    const double piece = stream.uniform() * total;
    const double position = stream.uniform();
    double w;
    double log_envelope;
    if (piece < middle_mass_) {
      w = -left_width_ + position * middle_mass_;
      log_envelope = 0.0;
    } else if (piece < middle_mass_ + right_mass_) {
      // Exponential with rate -right_slope_, truncated to the tail's length.
      const double excess = -std::log1p(-position * right_fraction_) / -right_slope_;
      w = right_width_ + excess;
      log_envelope = right_value_ + right_slope_ * excess;
    } else {
      const double excess = -std::log1p(-position * left_fraction_) / left_slope_;
      w = -left_width_ - excess;
      log_envelope = left_value_ - left_slope_ * excess;
    }
    if (std::log(stream.uniform()) <= log_density_offset(w) - log_envelope) {
      return std::clamp(std::exp(mode_ + w), lower_, upper_);
    }
  }
}

double sample_truncated_gig(double p, double chi, double psi, double r, RandomStream& stream) {
  return TruncatedGigSampler(p, chi, psi, r)(stream);
}

double sample_truncated_gig_below(double p, double chi, double psi, double r,
                                  RandomStream& stream) {
  return TruncatedGigSampler(p, chi, psi, 0.0, r)(stream);
}

}  // namespace kingman::kernels
