#include "adaptive_duration_law.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "kingman/error.hpp"
#include "kingman/kernels/vector_math.hpp"

namespace kingman {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Kronrod 15-point rule on [-1, 1]: the node 0 and the nodes +-kKronrodNode[i]; the 7-point
// Gauss rule uses 0 and the odd-numbered ones (i = 2, 4, 6 below, with 0 at i = 0).
// Values as in QUADPACK's qk15 (also Boost.Math's gauss_kronrod<double, 15> tables).
constexpr std::array<double, 8> kKronrodNode = {
    0.0,
    2.07784955007898467600689403773244913e-01,
    4.05845151377397166906606412076961463e-01,
    5.86087235467691130294144838258729598e-01,
    7.41531185599394439863864773280788407e-01,
    8.64864423359769072789712788640926201e-01,
    9.49107912342758524526189684047851262e-01,
    9.91455371120812639206854697526328517e-01,
};
constexpr std::array<double, 8> kKronrodWeight = {
    2.09482141084727828012999174891714264e-01, 2.04432940075298892414161999234649085e-01,
    1.90350578064785409913256402421013683e-01, 1.69004726639267902826583426598550284e-01,
    1.40653259715525918745189590510237920e-01, 1.04790010322250183839876322541518017e-01,
    6.30920926299785532907006631892042867e-02, 2.29353220105292249637320080589695920e-02,
};
// Gauss weights of the nodes kKronrodNode[0], [2], [4], [6].
constexpr std::array<double, 4> kGaussWeight = {
    4.17959183673469387755102040816326531e-01,
    3.81830050505118944950369775488975134e-01,
    2.79705391489276667901467771423779582e-01,
    1.29484966168869693270611432679082018e-01,
};
constexpr std::size_t kRuleSize = AdaptiveDurationLaw::kRuleSize;

// The tail past the panels is kept below this share of the mass.
constexpr double kLogTailShare = -39.143946580898;  // log(1e-17)
// Safety limits: a smooth integrand needs a few dozen panels; reaching these means a bug or a
// non-finite input, reported instead of looping.
constexpr std::size_t kMaxPanels = 4000;
// Panels above the anchor evaluated with those below it, before the extension asks for them:
// the Brownian laws of PostPost on data with missing entries take 5 on average (2026-11-25).
constexpr std::size_t kSpeculativePanels = 4;
constexpr int kMaxNewtonSteps = 200;

double log_add(double a, double b) {
  if (a < b) std::swap(a, b);
  if (b == -kInf) return a;
  return a + std::log1p(std::exp(b - a));
}

// The K15 nodes on [a, b]: the center, then pairs center -+ half * node.
std::array<double, kRuleSize> rule_nodes(double a, double b) {
  const double center = 0.5 * (a + b), half = 0.5 * (b - a);
  std::array<double, kRuleSize> nodes;
  nodes[0] = center;
  for (std::size_t i = 1; i < 8; ++i) {
    nodes[2 * i - 1] = center - half * kKronrodNode[i];
    nodes[2 * i] = center + half * kKronrodNode[i];
  }
  return nodes;
}

// log of the sum of exp(value(panel)) over the panels: one pass for the largest, one of exps.
template <class Value>
double log_sum_over(const std::vector<AdaptiveDurationLawPanel>& panels, Value value) {
  double top = -kInf;
  for (const auto& p : panels) top = std::max(top, value(p));
  if (!(top > -kInf && top < kInf)) return top;
  double sum = 0.0;
  for (const auto& p : panels) sum += std::exp(value(p) - top);
  return top + std::log(sum);
}

}  // namespace

void AdaptiveDurationLaw::set_exponential(double rate, double start_time) {
  rate_ = rate;
  start_time_ = start_time;
  exponential_ = true;
  panels_.clear();
  evaluations_ = 0;
  log_mass_ = -std::log(rate);
}

void AdaptiveDurationLaw::integrate(double rate, double start_time, double width, double anchor) {
  rate_ = rate;
  start_time_ = start_time;
  exponential_ = false;
  width_ = width;
  anchor_ = anchor;
  evaluations_ = 0;
  log_mass_ = integrate_from(0.0, panels_, evaluations_);
  update_sums();
}

void AdaptiveDurationLaw::update_sums() {
  const std::size_t count = panels_.size();
  share_.resize(count);
  left_share_.assign(count + 1, 0.0);
  right_share_.assign(count + 1, 0.0);
  log_right_.assign(count + 1, -kInf);
  log_right_error_.assign(count + 1, -kInf);
  for (std::size_t i = 0; i < count; ++i) {
    share_[i] = std::exp(panels_[i].log_integral - log_mass_);
    left_share_[i + 1] = left_share_[i] + share_[i];
  }
  for (std::size_t i = count; i-- > 0;) {
    right_share_[i] = right_share_[i + 1] + share_[i];
    log_right_[i] = log_add(log_right_[i + 1], panels_[i].log_integral);
    log_right_error_[i] = log_add(log_right_error_[i + 1], panels_[i].log_error);
  }
}

// The rule's sums from the log f values at rule_nodes, whose largest is `log_shift` (finite),
// given as exp(log f - log_shift).
AdaptiveDurationLaw::RuleSums AdaptiveDurationLaw::sum_rule(const double* values,
                                                            double log_shift) {
  RuleSums sums{log_shift, kKronrodWeight[0] * values[0], kGaussWeight[0] * values[0]};
  for (std::size_t i = 1; i < 8; ++i) {
    const double pair = values[2 * i - 1] + values[2 * i];
    sums.kronrod += kKronrodWeight[i] * pair;
    if (i % 2 == 0) sums.gauss += kGaussWeight[i / 2] * pair;
  }
  return sums;
}

void AdaptiveDurationLaw::apply_rules(const double* begins, const double* ends, std::size_t count,
                                      RuleSums* sums) const {
  // One batch of density values for all the panels: the model's vectorized logs then run over
  // whole vectors instead of 15 values at a time (the values do not depend on the batch).
  thread_local std::vector<double> nodes, values;
  nodes.resize(count * kRuleSize);
  values.resize(count * kRuleSize);
  for (std::size_t k = 0; k < count; ++k) {
    const std::array<double, kRuleSize> panel_nodes = rule_nodes(begins[k], ends[k]);
    std::copy(panel_nodes.begin(), panel_nodes.end(), nodes.begin() + k * kRuleSize);
  }
  log_density_batch(nodes.data(), values.data(), count * kRuleSize);
  for (std::size_t k = 0; k < count; ++k) {
    double* panel_values = values.data() + k * kRuleSize;
    const double shift = *std::max_element(panel_values, panel_values + kRuleSize);
    if (!(shift < kInf)) {
      throw NumericalError("merge-duration law: the density is not finite at delta = " +
                           std::to_string(nodes[k * kRuleSize]));
    }
    sums[k].log_shift = shift;
    for (std::size_t i = 0; i < kRuleSize; ++i)
      panel_values[i] = shift == -kInf ? -kInf : panel_values[i] - shift;
  }
  kernels::exp_array(values.data(), values.data(), count * kRuleSize);
  for (std::size_t k = 0; k < count; ++k) {
    if (sums[k].log_shift == -kInf) {
      sums[k] = {-kInf, 0.0, 0.0};
    } else {
      sums[k] = sum_rule(values.data() + k * kRuleSize, sums[k].log_shift);
    }
  }
}

AdaptiveDurationLaw::RuleSums AdaptiveDurationLaw::apply_rule(double a, double b) const {
  RuleSums sums;
  apply_rules(&a, &b, 1, &sums);
  return sums;
}

void AdaptiveDurationLaw::log_density_batch(const double* deltas, double* out,
                                            std::size_t count) const {
  for (std::size_t i = 0; i < count; ++i) out[i] = log_density(deltas[i]);
}

void AdaptiveDurationLaw::evaluate_panels(const double* begins, const double* ends,
                                          std::size_t count, Panel* out) const {
  thread_local std::vector<RuleSums> sums;
  sums.resize(count);
  apply_rules(begins, ends, count, sums.data());
  for (std::size_t k = 0; k < count; ++k) {
    Panel& panel = out[k];
    panel = {begins[k], ends[k], -kInf, -kInf};
    if (sums[k].log_shift == -kInf) continue;
    const double half = 0.5 * (ends[k] - begins[k]);
    panel.log_integral = sums[k].log_shift + std::log(half * sums[k].kronrod);
    const double difference = std::abs(sums[k].kronrod - sums[k].gauss);
    if (difference > 0.0) panel.log_error = sums[k].log_shift + std::log(half * difference);
  }
}

AdaptiveDurationLaw::Panel AdaptiveDurationLaw::evaluate_panel(double begin, double end) const {
  Panel panel;
  evaluate_panels(&begin, &end, 1, &panel);
  return panel;
}

double AdaptiveDurationLaw::integrate_from(double begin, std::vector<Panel>& panels,
                                           std::size_t& evaluations) const {
  panels.clear();
  // Geometric panels anchor +- w (2^k - 1): the first as wide as the model's narrowest feature
  // of f, the last ones as wide as its slowest decay; bisection refines where needed. Below the
  // anchor they stop at `begin`. The panels below the anchor and the first kSpeculativePanels
  // above it are evaluated in one batch; the extension takes those above in order for as long
  // as it needs them, so the panels are those it would have evaluated one at a time.
  double width = width_, edge = std::max(begin, anchor_);
  thread_local std::vector<double> begins, ends;
  thread_local std::vector<Panel> batch;
  begins.clear();
  ends.clear();
  for (double right = edge, w = width; right > begin; w *= 2.0) {
    const double left = std::max(begin, right - w);
    if (!(left < right)) break;
    begins.push_back(left);
    ends.push_back(right);
    right = left;
  }
  const std::size_t below = begins.size();
  for (double from = edge, w = width; begins.size() < below + kSpeculativePanels; w *= 2.0) {
    if (!std::isfinite(from + w)) break;
    begins.push_back(from);
    ends.push_back(from + w);
    from += w;
  }
  batch.resize(begins.size());
  evaluate_panels(begins.data(), ends.data(), begins.size(), batch.data());
  evaluations += begins.size() * kRuleSize;
  panels.assign(batch.rend() - static_cast<std::ptrdiff_t>(below), batch.rend());
  std::size_t next_speculative = below;
  auto log_total = [&] {
    return log_sum_over(panels, [](const Panel& p) { return p.log_integral; });
  };
  auto extend_until_tail_is_negligible = [&] {
    while (panels.empty() || !(log_tail_bound(edge) < kLogTailShare + log_total())) {
      if (panels.size() >= kMaxPanels || !std::isfinite(edge + width)) {
        throw NumericalError("merge-duration law: the tail of the density does not vanish (rate " +
                             std::to_string(rate_) + ", start time " + std::to_string(start_time_) +
                             ")");
      }
      if (next_speculative < batch.size()) {
        panels.push_back(batch[next_speculative++]);
      } else {
        panels.push_back(evaluate_panel(edge, edge + width));
        evaluations += kRuleSize;
      }
      edge += width;
      width *= 2.0;
    }
    next_speculative = batch.size();  // a later extension starts past a refinement
  };
  extend_until_tail_is_negligible();
  const double log_tolerance = std::log(kErrorEstimateTolerance);
  for (;;) {
    const double total = log_total();
    const double error = log_sum_over(panels, [](const Panel& p) { return p.log_error; });
    std::size_t worst = 0;
    for (std::size_t i = 1; i < panels.size(); ++i)
      if (panels[i].log_error > panels[worst].log_error) worst = i;
    if (error <= log_tolerance + total) {
      // Refinement can lower the total: the tail bound must still hold against it.
      if (log_tail_bound(edge) < kLogTailShare + total) return total;
      extend_until_tail_is_negligible();
      continue;
    }
    if (!bisect(panels, worst, evaluations)) {
      throw NumericalError("merge-duration law: adaptive quadrature did not converge (rate " +
                           std::to_string(rate_) + ", start time " + std::to_string(start_time_) +
                           ", near delta = " + std::to_string(panels[worst].begin) + ")");
    }
  }
}

bool AdaptiveDurationLaw::bisect(std::vector<Panel>& panels, std::size_t i,
                                 std::size_t& evaluations) const {
  const Panel split = panels[i];
  const double middle = 0.5 * (split.begin + split.end);
  if (panels.size() >= kMaxPanels || !(middle > split.begin && middle < split.end)) return false;
  const double halves_begin[2] = {split.begin, middle}, halves_end[2] = {middle, split.end};
  Panel halves[2];
  evaluate_panels(halves_begin, halves_end, 2, halves);
  panels[i] = halves[0];
  panels.insert(panels.begin() + static_cast<std::ptrdiff_t>(i) + 1, halves[1]);
  evaluations += 2 * kRuleSize;
  return true;
}

void AdaptiveDurationLaw::resolve_upper(double delta0) {
  // Enough for the upper masses PostPost asks of a shared law; past it log_upper integrates
  // afresh, as it would have without this.
  constexpr int kMaxRefinements = 64;
  if (exponential_ || !(delta0 > 0.0) || !std::isfinite(delta0)) return;
  const double log_tolerance = std::log(kErrorEstimateTolerance);
  for (int refinement = 0; refinement < kMaxRefinements; ++refinement) {
    if (!(delta0 < panels_.back().end)) return;  // beyond the panels: log_upper's own case
    const auto after = std::upper_bound(panels_.begin(), panels_.end(), delta0,
                                        [](double v, const Panel& p) { return v < p.begin; });
    const std::size_t i = static_cast<std::size_t>(after - panels_.begin()) - 1;
    const double log_upper = log_add(log_partial(delta0, panels_[i].end), log_right_[i + 1]);
    const double log_error = log_add(panels_[i].log_error, log_right_error_[i + 1]);
    const double edge = panels_.back().end;
    if (!(log_tail_bound(edge) < kLogTailShare + log_upper)) {
      // The tail past the panels is not negligible against this upper mass: one more panel,
      // twice as wide as the last.
      const double width = 2.0 * (edge - panels_.back().begin);
      if (!std::isfinite(edge + width) || panels_.size() >= kMaxPanels) return;
      panels_.push_back(evaluate_panel(edge, edge + width));
      evaluations_ += kRuleSize;
    } else if (!(log_error <= log_tolerance + log_upper)) {
      // The error estimates from delta0's panel on are too large against it: bisect the worst.
      std::size_t worst = i;
      for (std::size_t k = i + 1; k < panels_.size(); ++k)
        if (panels_[k].log_error > panels_[worst].log_error) worst = k;
      if (!bisect(panels_, worst, evaluations_)) return;
    } else {
      return;
    }
    log_mass_ = log_sum_over(panels_, [](const Panel& p) { return p.log_integral; });
    update_sums();
  }
}

double AdaptiveDurationLaw::log_partial(double a, double b) const {
  if (!(b > a)) return -kInf;
  const RuleSums sums = apply_rule(a, b);
  if (sums.log_shift == -kInf) return -kInf;
  return sums.log_shift + std::log(0.5 * (b - a) * sums.kronrod);
}

double AdaptiveDurationLaw::log_upper(double delta0) const {
  if (!(delta0 > 0.0)) {
    if (std::isnan(delta0)) throw NumericalError("merge-duration law: log_upper of NaN");
    return log_mass_;
  }
  if (exponential_) return -rate_ * delta0 - std::log(rate_);
  if (delta0 < panels_.back().end) {
    // The panel holding delta0: the last one that begins at or before it.
    const auto after = std::upper_bound(panels_.begin(), panels_.end(), delta0,
                                        [](double v, const Panel& p) { return v < p.begin; });
    const std::size_t i = static_cast<std::size_t>(after - panels_.begin()) - 1;
    const double log_upper = log_add(log_partial(delta0, panels_[i].end), log_right_[i + 1]);
    // The stored panels are accurate relative to the whole mass; use them only where that is
    // also accurate relative to this upper mass (the partial panel's error is at most its
    // panel's), and where the neglected tail is negligible against it.
    const double log_error = log_add(panels_[i].log_error, log_right_error_[i + 1]);
    if (log_error <= std::log(kErrorEstimateTolerance) + log_upper &&
        log_tail_bound(panels_.back().end) < kLogTailShare + log_upper) {
      return log_upper;
    }
  }
  // Far in the tail: integrate [delta0, inf) afresh, to the same relative accuracy.
  std::vector<Panel> panels;
  std::size_t evaluations = 0;
  return integrate_from(delta0, panels, evaluations);
}

double AdaptiveDurationLaw::draw(double u) const {
  if (!(u > 0.0 && u < 1.0)) {
    throw OptionError("merge-duration law: draw needs u in (0, 1), got " + std::to_string(u));
  }
  if (exponential_) return -std::log1p(-u) / rate_;
  const std::size_t count = panels_.size();
  // The quantile is found inside one panel by solving (integral from the panel's start, or to
  // its end) = target, with the target in absolute terms: relative to the target itself the
  // in-panel integrals are accurate even where the panel's share of the mass is not.
  if (u <= 0.5) {
    // The first panel whose cumulative share reaches u.
    const auto it = std::lower_bound(left_share_.begin() + 1, left_share_.end(), u);
    const std::size_t i = std::min<std::size_t>(it - left_share_.begin() - 1, count - 1);
    return invert_in_panel(i, std::log(std::max(u - left_share_[i], 0.0)) + log_mass_, true);
  }
  // From the right: 1 - u is exact for u >= 1/2, so the upper tail keeps its accuracy.
  const double v = 1.0 - u;
  // The last panel whose share from the right reaches v (right_share_ decreases).
  std::size_t lo = 0, hi = count;  // right_share_[lo] >= v (or lo = 0), right_share_[hi] < v
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    if (right_share_[mid] >= v) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return invert_in_panel(lo, std::log(std::max(v - right_share_[lo + 1], 0.0)) + log_mass_, false);
}

double AdaptiveDurationLaw::invert_in_panel(std::size_t i, double log_target,
                                            bool from_left) const {
  const Panel& panel = panels_[i];
  if (log_target == -kInf) return from_left ? panel.begin : panel.end;
  // h(delta) = (integral from the panel's start to delta) / target - 1, increasing, or for the
  // right side 1 - (integral from delta to the panel's end) / target, also increasing; h' =
  // f / target in both cases. A target beyond the panel's integral (rounding) ends at its edge.
  auto residual = [&](double delta) {
    if (from_left) return std::exp(log_partial(panel.begin, delta) - log_target) - 1.0;
    return 1.0 - std::exp(log_partial(delta, panel.end) - log_target);
  };
  double lo = panel.begin, hi = panel.end;
  const double fraction = std::min(1.0, std::exp(log_target - panel.log_integral));
  double delta = from_left ? panel.begin + fraction * (panel.end - panel.begin)
                           : panel.end - fraction * (panel.end - panel.begin);
  for (int step = 0; step < kMaxNewtonSteps; ++step) {
    const double h = residual(delta);
    if (h == 0.0) return delta;
    if (h < 0.0) {
      lo = delta;
    } else {
      hi = delta;
    }
    const double slope = std::exp(log_density(delta) - log_target);
    double next = delta - h / slope;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);  // also catches slope 0 or NaN
    const double tolerance = 4.0 * std::numeric_limits<double>::epsilon() * std::abs(next);
    if (std::abs(next - delta) <= tolerance || hi - lo <= tolerance) return next;
    delta = next;
  }
  return delta;  // the bracket is then as small as doubles allow
}

}  // namespace kingman
