#include "discrete_pair_mass.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>

#include "kingman/error.hpp"
#include "kingman/kernels/vector_math.hpp"
#include "kingman/model/cache_line_vector.hpp"

namespace kingman {

namespace {
std::atomic<std::uint64_t> next_identity{1};
}  // namespace

bool DiscretePairMasses::supports(double rate, double mutation_rate) {
  const double exponent = rate / (2.0 * mutation_rate) - 1.0;
  return rate > 0.0 && mutation_rate > 0.0 && exponent >= -1.0 + 0x1p-20 && exponent <= 0x1p50;
}

DiscretePairMasses::DiscretePairMasses(double rate, double mutation_rate, std::size_t columns)
    : rate_(rate),
      mutation_rate_(mutation_rate),
      log_scale_(-std::log(2.0 * mutation_rate)),
      max_varying_(std::min(columns, kMaxColumns)),
      identity_(next_identity.fetch_add(1, std::memory_order_relaxed)) {
  if (!supports(rate, mutation_rate)) {
    throw OptionError("pair masses: no Gauss-Jacobi rule for the rate " + std::to_string(rate) +
                      " and mutation rate " + std::to_string(mutation_rate));
  }
  // 2N - 1 >= max_varying_: exact for every pair of at most that many varying columns.
  rule_ = kernels::gauss_jacobi_rule(max_varying_ / 2 + 1, rate / (2.0 * mutation_rate) - 1.0);
  weight_lanes_.assign((rule_.weight.size() + 7) / 8 * 8, 0.0);
  std::copy(rule_.weight.begin(), rule_.weight.end(), weight_lanes_.begin());
  log_weight_.resize(rule_.weight.size());
  for (std::size_t i = 0; i < log_weight_.size(); ++i) log_weight_[i] = std::log(rule_.weight[i]);
}

bool DiscretePairMasses::handles(const DiscretePair& pair) const {
  return pair.shared_columns() <= max_varying_ &&
         (pair.shared_columns() == 0 || (pair.common_rate() && pair.rate(0) == mutation_rate_));
}

double DiscretePairMasses::log_mass(const DiscretePair& pair, double start_time) const {
  double value;
  return mass_sum(pair, start_time, value) ? std::log(value) + log_scale_ : value;
}

bool DiscretePairMasses::mass_sum(const DiscretePair& pair, double start_time,
                                  double& value) const {
  // log x0 = lambda_c (2 T0 - t_l - t_r) <= 0, and x0 and 1 - x0 each to relative precision.
  const double log_x0 = mutation_rate_ * std::min(2.0 * start_time - pair.time_sum(), 0.0);
  const std::size_t nodes = rule_.node.size();
  const std::size_t columns = pair.shared_columns();
  // P at every node at once, column by column: the nodes' products are independent chains of
  // multiplications, which the processor overlaps (one product at a time would wait on each
  // multiplication's latency), in the SIMD lanes of multiply_affine_factors, which keeps them in
  // registers across a block of columns. Factor of column d at node i: (1 - x0 v_i) + x0 v_i S_d,
  // with 1 - x0 v_i = (1 - x0) + x0 (1 - v_i). The lanes beyond the last node hold factors of 1.
  // The per-node parts depend on the pair only through log x0, which every pair of two leaves
  // (or of two clusters of equal time sums) shares: they are kept for the last log x0 and rule.
  // All of this thread's scratch lies in cache lines of its own (cache_line_vector.hpp).
  const std::size_t lanes = (nodes + 7) / 8 * 8;
  struct NodeParts {
    std::uint64_t identity = 0;  // no rule set's
    double log_x0 = 0.0;
    CacheLineVector<double> x, one_minus_x;
  };
  thread_local NodeParts parts;
  thread_local CacheLineVector<double> product, folded;
  if (parts.identity != identity_ || parts.log_x0 != log_x0) {
    const double x0 = std::exp(log_x0), u0 = -std::expm1(log_x0);
    parts.x.assign(lanes, 0.0);
    parts.one_minus_x.assign(lanes, 1.0);
    for (std::size_t i = 0; i < nodes; ++i) {
      parts.x[i] = x0 * rule_.complement[i];
      parts.one_minus_x[i] = u0 + x0 * rule_.node[i];
    }
    parts.identity = identity_;
    parts.log_x0 = log_x0;
  }
  const CacheLineVector<double>& x = parts.x;
  const CacheLineVector<double>& one_minus_x = parts.one_minus_x;
  product.assign(lanes, 1.0);
  folded.assign(nodes, 0.0);
  // Products are kept in range by folding them into `folded` (their logs) when they leave
  // [1e-150, 1e150], checked after every `block` columns: each factor lies between
  // min_i (1 - x0 v_i) (the first node's, nodes ascending in u) and max(1, max S_d), so `block`
  // factors within [10^-s, 10^s] (block s <= 144) move a product by at most 10^144 and leave
  // it a normal number. The first block starts from products of 1, so it cannot leave the range
  // and needs no check: with the factors within [1e-5, 1e5] a pair of up to 28 columns needs
  // none at all. (A check per eight columns, a compare and branch per node, was half of this
  // function's time at 20 columns.)
  // (max_array: a running std::max is a chain of dependent maxima; both pass over NaN.)
  const double largest_overlap = std::max(1.0, kernels::max_array(pair.overlaps(), columns));
  const double smallest_factor = nodes > 0 ? one_minus_x[0] : 0.0;
  std::size_t block = 1;
  if (smallest_factor >= 1e-5 && largest_overlap <= 1e5) {
    block = 28;
  } else if (smallest_factor >= 1e-10 && largest_overlap <= 1e10) {
    block = 14;
  } else if (smallest_factor >= 1e-18 && largest_overlap <= 1e18) {
    block = 8;
  }
  bool any_folded = false;
  for (std::size_t begin = 0; begin < columns; begin += block) {
    const std::size_t end = std::min(columns, begin + block);
    kernels::multiply_affine_factors(product.data(), one_minus_x.data(), x.data(), lanes,
                                     pair.overlaps() + begin, end - begin);
    if (begin == 0 && block > 1) continue;  // from 1, within [10^-144, 10^144]
    for (std::size_t i = 0; i < nodes; ++i) {
      if (!(product[i] > 1e-150 && product[i] < 1e150)) {
        folded[i] += std::log(product[i]);  // -inf for a factor 0, which interior nodes avoid
        product[i] = 1.0;
        any_folded = true;
      }
    }
  }
  if (!any_folded) {
    // The weighted sum directly, its log left to the caller. Terms that underflow here are
    // below 1e-308 against a sum above 1e-280.
    // Eight partial sums, lane by lane (the lanes beyond the last node have weight 0), joined
    // pairwise: one running sum was a chain of dependent additions, 40 % of this function.
    double partial[8] = {};
    for (std::size_t i = 0; i < lanes; i += 8)
      for (std::size_t k = 0; k < 8; ++k) partial[k] += weight_lanes_[i + k] * product[i + k];
    const double sum = ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
                       ((partial[4] + partial[5]) + (partial[6] + partial[7]));
    if (sum > 1e-280 && sum < std::numeric_limits<double>::infinity()) {
      value = sum;
      return true;
    }
  }
  // Otherwise in logs: log(weight P(v_i)) per node, then their log-sum-exp.
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double largest = -kInf;
  for (std::size_t i = 0; i < nodes; ++i) {
    folded[i] += log_weight_[i] + std::log(product[i]);
    largest = std::max(largest, folded[i]);
  }
  if (!(largest > -kInf)) {
    value = -kInf;
    return false;
  }
  double sum = 0.0;
  for (std::size_t i = 0; i < nodes; ++i) sum += std::exp(folded[i] - largest);
  value = largest + std::log(sum) + log_scale_;
  return false;
}

double DiscretePairMasses::quantile(const DiscretePair& pair, double start_time, double log_mass,
                                    double u) const {
  if (!(u >= kSmallestQuantile && u < 1.0)) {
    if (u >= 1.0 || std::isnan(u)) {
      throw OptionError("merge-duration quantile: u must be in (0, 1), got " + std::to_string(u));
    }
    return std::numeric_limits<double>::quiet_NaN();
  }
  const double target = std::log1p(-u) + log_mass;
  // phi(delta) = log upper(delta) - target: decreasing, positive at 0 (u > 0).
  auto log_upper = [&](double delta) {
    return -rate_ * delta + this->log_mass(pair, start_time - delta);
  };
  constexpr double kTolerance = 4.0 * std::numeric_limits<double>::epsilon();
  // An upper end: each factor Z^d is at most max(1, S_d), so upper(delta) <= e^{-lambda delta}
  // prod_d max(1, S_d) / lambda, which is at the target at `hi` (finite): the root lies below.
  // (The columns' logs through log_array: a libm log per column was 5 % of a binary race.)
  thread_local CacheLineVector<double> column_logs;
  const std::size_t columns = pair.shared_columns();
  column_logs.resize(columns);
  for (std::size_t k = 0; k < columns; ++k) column_logs[k] = std::max(1.0, pair.overlap(k));
  kernels::log_array(column_logs.data(), column_logs.data(), columns);
  double log_bound = -std::log(rate_);
  for (std::size_t k = 0; k < columns; ++k) log_bound += column_logs[k];
  double lo = 0.0, hi = std::max(0.0, (log_bound - target) / rate_);
  // At delta = 0 phi is -log(1 - u) and the hazard f / upper is f(0) / G_C, with no sum: start
  // from that Newton step (exact for an exponential law), or from the exponential law's
  // quantile where f(0) = 0 (leaves that disagree somewhere merge at 0 with likelihood 0).
  const double phi_at_zero = -std::log1p(-u);
  const double hazard_at_zero = std::exp(pair.log_local_likelihood(start_time) - log_mass);
  double delta = hazard_at_zero > 0.0 && std::isfinite(phi_at_zero / hazard_at_zero)
                     ? phi_at_zero / hazard_at_zero
                     : phi_at_zero / rate_;
  if (!(delta < hi)) delta = 0.5 * hi;
  // Newton steps are taken while they stay inside the bracket and at least halve the step
  // before last (as in bracketed_root.hpp: Newton's steps can cycle between a flat stretch of
  // the upper mass and its steep tail), bisection otherwise: in log delta while the bracket
  // spans more than a factor 4, since steps from where the hazard is tiny overshoot by orders
  // of magnitude.
  double step = hi - lo, step_before = step;
  double before = 0.0, slope_before = 0.0;  // the previous iterate and phi' there
  bool newton_before = false;               // whether a Newton step led here
  for (int iteration = 0; iteration < 200; ++iteration) {
    const double upper = log_upper(delta);
    const double phi = upper - target;
    if (phi == 0.0) return delta;
    (phi > 0.0 ? lo : hi) = delta;
    // phi' = -f / upper, so the Newton step is phi upper / f (positive where phi > 0).
    const double log_f = -rate_ * delta + pair.log_local_likelihood(start_time - delta);
    const double slope = -std::exp(log_f - upper);
    const double newton = -phi / slope;
    double next = delta + newton;
    const bool newton_usable =
        next > lo && next < hi && std::abs(newton) <= 0.5 * std::abs(step_before);
    if (newton_usable) {
      if (std::abs(newton) <= kTolerance * delta) return next;
      // Newton's error after this step is about |phi'' / 2 phi'| step^2, with phi'' from the
      // secant of phi' since the previous iterate (itself a Newton step close by): accepted
      // where that is below the tolerance and the step is short against the scale on which
      // phi' changes.
      if (newton_before && std::abs(delta - before) <= 1e-3 * delta) {
        const double curvature = (slope - slope_before) / (delta - before);
        const double relative_change = std::abs(curvature * newton / slope);
        if (relative_change < 1e-3 &&
            0.5 * relative_change * std::abs(newton) <= 0.25 * kTolerance * next)
          return next;
      }
    } else {
      next = lo > 0.0 && hi > 4.0 * lo ? std::sqrt(lo * hi) : 0.5 * (lo + hi);
    }
    if (hi - lo <= kTolerance * hi) return next;
    step_before = step;
    step = next - delta;
    before = delta;
    slope_before = slope;
    newton_before = newton_usable;
    delta = next;
  }
  return delta;
}

}  // namespace kingman
