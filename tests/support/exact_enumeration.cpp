#include "exact_enumeration.hpp"

#include <algorithm>
#include <atomic>
#include <boost/math/special_functions/bessel.hpp>
#include <cmath>
#include <exception>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <thread>

namespace kingman::oracle {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double lambda_of(std::size_t m) {
  return 0.5 * static_cast<double>(m) * static_cast<double>(m - 1);
}

void enumerate_rec(std::size_t n, std::vector<int>& live, History& prefix,
                   std::vector<History>& out) {
  if (live.size() <= 1) {
    out.push_back(prefix);
    return;
  }
  const int new_id = static_cast<int>(n + prefix.size());
  for (std::size_t a = 0; a < live.size(); ++a) {
    for (std::size_t b = a + 1; b < live.size(); ++b) {
      const int ia = live[a], ib = live[b];
      std::vector<int> next;
      next.reserve(live.size() - 1);
      for (std::size_t c = 0; c < live.size(); ++c)
        if (c != a && c != b) next.push_back(live[c]);
      next.push_back(new_id);
      prefix.emplace_back(std::min(ia, ib), std::max(ia, ib));
      enumerate_rec(n, next, prefix, out);
      prefix.pop_back();
    }
  }
}

// Checks that history is a valid sequence of merges over n leaves.
void check_history(std::size_t n, const History& history) {
  std::vector<char> used(2 * n, 0);
  for (std::size_t k = 0; k < history.size(); ++k) {
    const auto [a, b] = history[k];
    const int limit = static_cast<int>(n + k);
    if (a < 0 || b < 0 || a >= limit || b >= limit || a == b || used[a] || used[b])
      throw std::invalid_argument("oracle: invalid merge " + std::to_string(k) + " (" +
                                  std::to_string(a) + ", " + std::to_string(b) + ")");
    used[a] = used[b] = 1;
  }
}

// Smallest leaf below each node and the string of each node.
std::string topology_string(std::size_t n, const History& history, int node,
                            std::vector<int>& min_leaf) {
  if (node < static_cast<int>(n)) return std::to_string(node);
  const auto [a, b] = history[static_cast<std::size_t>(node) - n];
  std::string sa = topology_string(n, history, a, min_leaf);
  std::string sb = topology_string(n, history, b, min_leaf);
  if (min_leaf[b] < min_leaf[a]) std::swap(sa, sb);
  return "(" + sa + "," + sb + ")";
}

// Double-exponential quadrature of g >= 0 over [0, inf): trapezoid rule in t with
// delta = c exp(t - exp(-t)), d delta = delta (1 + exp(-t)) dt, which decays double
// exponentially at both ends for integrands like exp(-lambda delta) times a bounded factor.
// A scan with step 1/2 outward from t = 0 fixes the range (terms below 1e-16 of the sum end it);
// the step then halves until two successive sums agree to rel_tol (at least one halving).
// Midpoints between two grid values below 1e-15 of the largest are not evaluated (taken as 0).
class DeQuadrature {
 public:
  DeQuadrature(double rel_tol, int max_refinements)
      : rel_tol_(rel_tol), max_refinements_(max_refinements) {}

  // g(x, floor): the integrand at x; floor is the absolute error it may make (for nested
  // integrals). Stops when successive sums differ by <= max(rel_tol |sum|, abs_floor).
  template <class G>
  double integrate(G&& g, double c, double abs_floor) const {
    double fmax = 0.0;  // largest term so far
    auto term = [&](double t) {
      const double e = std::exp(-t);
      const double x = c * std::exp(t - e);
      if (!(x > 0.0) || !std::isfinite(x)) return 0.0;
      const double w = x * (1.0 + e);
      // An absolute error of floor in g(x) moves the sum by at most rel_tol_ * fmax / 100.
      const double v = g(x, 0.01 * rel_tol_ * fmax / w);
      const double f = v == 0.0 ? 0.0 : v * w;
      fmax = std::max(fmax, f);
      return f;
    };
    const double h0 = 0.5;
    const int k_max = 120, k_min = -12;  // t in [-6, 60]
    const double negligible = 1e-16, skip = 1e-15;
    double sum = 0.0;
    std::vector<double> up, down;  // terms at t = k h0 for k >= 0 and k < 0
    {
      int small_run = 0, zero_run = 0;
      for (int k = 0; k <= k_max; ++k) {
        const double f = term(k * h0);
        up.push_back(f);
        sum += f;
        small_run = (sum > 0.0 && f <= negligible * sum) ? small_run + 1 : 0;
        zero_run = (f == 0.0) ? zero_run + 1 : 0;
        if (small_run >= 3 || (zero_run >= 2 && k * h0 >= 2.0)) break;
      }
      small_run = 0;
      for (int k = -1; k >= k_min; --k) {
        const double f = term(k * h0);
        down.push_back(f);
        sum += f;
        small_run = (f <= negligible * sum) ? small_run + 1 : 0;
        if (small_run >= 3) break;
      }
    }
    std::vector<double> grid(down.rbegin(), down.rend());
    grid.insert(grid.end(), up.begin(), up.end());
    const double t_lo = -static_cast<double>(down.size()) * h0;
    if (!(fmax > 0.0)) return 0.0;

    double estimate = h0 * sum;
    double h = h0;
    std::vector<double> next_grid;
    for (int level = 1; level <= max_refinements_; ++level) {
      h *= 0.5;
      next_grid.assign(2 * grid.size() - 1, 0.0);
      double mid = 0.0;
      for (std::size_t i = 0; i + 1 < grid.size(); ++i) {
        next_grid[2 * i] = grid[i];
        if (std::max(grid[i], grid[i + 1]) <= skip * fmax) continue;
        const double f = term(t_lo + static_cast<double>(2 * i + 1) * h);
        next_grid[2 * i + 1] = f;
        mid += f;
      }
      next_grid.back() = grid.back();
      grid.swap(next_grid);
      const double next = 0.5 * estimate + h * mid;
      const double change = std::abs(next - estimate);
      estimate = next;
      if (change <= std::max(rel_tol_ * std::abs(estimate), abs_floor)) break;
    }
    return estimate;
  }

 private:
  double rel_tol_;
  int max_refinements_;
};

// Integrates one history's joint density over its durations.
class HistoryIntegrator {
 public:
  HistoryIntegrator(std::size_t n, const History& history, const LogLikelihood& loglik,
                    const DeQuadrature& quad)
      : levels_(n - 1),
        history_(history),
        loglik_(loglik),
        quad_(quad),
        lambda_(levels_),
        delta_(levels_),
        times_(levels_),
        scale_(levels_) {
    for (std::size_t k = 0; k < levels_; ++k) lambda_[k] = lambda_of(n - k);
  }

  std::size_t evaluations() const { return evaluations_; }

  // log of the integral over durations of p(x, history, durations).
  double log_mass() {
    find_mode();
    if (!(offset_ > -kInf)) return -kInf;
    const double integral = integrate_level(0, 0.0);
    return integral > 0.0 ? offset_ + std::log(integral) : -kInf;
  }

 private:
  // log of prior density times likelihood at the current durations delta_.
  double log_integrand() {
    double t = 0.0, log_prior = 0.0;
    for (std::size_t k = 0; k < levels_; ++k) {
      t -= delta_[k];
      times_[k] = t;
      log_prior -= lambda_[k] * delta_[k];
    }
    ++evaluations_;
    const double ll = loglik_(history_, times_);
    if (std::isnan(ll) || ll == kInf)
      throw std::invalid_argument(
          "enumerate_exact: the likelihood returned " + std::to_string(ll) +
          " (an infinite density: duplicate points with zero leaf variance?)");
    return log_prior + ll;
  }

  // Objective in log-duration space: log integrand + sum_k log delta_k.
  double log_objective(const std::vector<double>& u) {
    double jac = 0.0;
    for (std::size_t k = 0; k < levels_; ++k) {
      delta_[k] = std::exp(u[k]);
      jac += u[k];
    }
    return log_integrand() + jac;
  }

  // Coordinate ascent on a grid plus golden-section refinement: the scale of every level
  // (the mode of delta_k) and the log offset that keeps the integrand near 1.
  void find_mode() {
    std::vector<double> u(levels_);
    for (std::size_t k = 0; k < levels_; ++k) u[k] = -std::log(lambda_[k]);
    double best = log_objective(u);
    for (int sweep = 0; sweep < 3; ++sweep) {
      for (std::size_t k = 0; k < levels_; ++k) {
        const double hi = std::log(60.0 / lambda_[k]);
        double best_u = u[k];
        for (double v = -45.0; v <= hi; v += 0.5) {
          u[k] = v;
          const double f = log_objective(u);
          if (f > best) {
            best = f;
            best_u = v;
          }
        }
        // Golden section on [best_u - 0.5, best_u + 0.5].
        const double g = 0.5 * (std::sqrt(5.0) - 1.0);
        double a = best_u - 0.5, b = best_u + 0.5;
        double x1 = b - g * (b - a), x2 = a + g * (b - a);
        u[k] = x1;
        double f1 = log_objective(u);
        u[k] = x2;
        double f2 = log_objective(u);
        for (int it = 0; it < 25; ++it) {
          if (f1 > f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - g * (b - a);
            u[k] = x1;
            f1 = log_objective(u);
          } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + g * (b - a);
            u[k] = x2;
            f2 = log_objective(u);
          }
        }
        if (f1 > best) {
          best = f1;
          best_u = x1;
        }
        if (f2 > best) {
          best = f2;
          best_u = x2;
        }
        u[k] = best_u;
      }
    }
    offset_ = best;
    for (std::size_t k = 0; k < levels_; ++k) scale_[k] = std::exp(u[k]);
  }

  double integrate_level(std::size_t k, double abs_floor) {
    return quad_.integrate(
        [&](double x, double floor) {
          delta_[k] = x;
          if (k + 1 == levels_) return std::exp(log_integrand() - offset_);
          return integrate_level(k + 1, floor);
        },
        scale_[k], abs_floor);
  }

  std::size_t levels_;
  const History& history_;
  const LogLikelihood& loglik_;
  const DeQuadrature& quad_;
  std::vector<double> lambda_, delta_, times_, scale_;
  double offset_ = 0.0;
  std::size_t evaluations_ = 0;
};

// Brownian message passing with per-dimension variances; NaN entries are missing.
class BrownianLikelihood {
 public:
  BrownianLikelihood(std::vector<double> x, std::size_t n, std::size_t d, double v0)
      : x_(std::move(x)), n_(n), d_(d), v0_(v0) {}

  double operator()(const History& history, const std::vector<double>& times) const {
    if (history.size() != times.size() || history.size() >= n_)
      throw std::invalid_argument(
          "brownian likelihood: history and times must have equal length, at most n - 1");
    const std::size_t nodes = n_ + history.size();
    mean_.resize(nodes * d_);
    var_.resize(nodes * d_);
    time_.resize(nodes);
    for (std::size_t i = 0; i < n_; ++i) {
      time_[i] = 0.0;
      for (std::size_t j = 0; j < d_; ++j) {
        const double v = x_[i * d_ + j];
        const bool missing = std::isnan(v);
        mean_[i * d_ + j] = missing ? 0.0 : v;
        var_[i * d_ + j] = missing ? kInf : v0_;
      }
    }
    constexpr double log_two_pi = 1.8378770664093454836;  // log(2 pi)
    double ll = 0.0;
    for (std::size_t k = 0; k < history.size(); ++k) {
      const auto [ia, ib] = history[k];
      const std::size_t limit = n_ + k;
      if (ia < 0 || ib < 0 || static_cast<std::size_t>(ia) >= limit ||
          static_cast<std::size_t>(ib) >= limit || ia == ib)
        throw std::invalid_argument("brownian likelihood: bad node pair at merge " +
                                    std::to_string(k));
      const auto a = static_cast<std::size_t>(ia), b = static_cast<std::size_t>(ib);
      const std::size_t c = n_ + k;
      const double t = times[k];
      const double dtl = time_[a] - t, dtr = time_[b] - t;
      if (!(dtl >= 0.0) || !(dtr >= 0.0))
        throw std::invalid_argument("brownian likelihood: merge " + std::to_string(k) +
                                    " is later than one of its children");
      time_[c] = t;
      for (std::size_t j = 0; j < d_; ++j) {
        const double vl = var_[a * d_ + j], vr = var_[b * d_ + j];
        const double ml = mean_[a * d_ + j], mr = mean_[b * d_ + j];
        const bool miss_l = std::isinf(vl), miss_r = std::isinf(vr);
        if (miss_l && miss_r) {
          var_[c * d_ + j] = kInf;
          mean_[c * d_ + j] = 0.0;
        } else if (miss_l) {
          var_[c * d_ + j] = vr + dtr;
          mean_[c * d_ + j] = mr;
        } else if (miss_r) {
          var_[c * d_ + j] = vl + dtl;
          mean_[c * d_ + j] = ml;
        } else {
          const double sl = vl + dtl, sr = vr + dtr, s = sl + sr;
          const double diff = ml - mr;
          if (s == 0.0) return diff == 0.0 ? kInf : -kInf;
          ll += -0.5 * (log_two_pi + std::log(s)) - diff * diff / (2.0 * s);
          var_[c * d_ + j] = sl * sr / s;
          mean_[c * d_ + j] = (ml * sr + mr * sl) / s;
        }
      }
    }
    return ll;
  }

 private:
  std::vector<double> x_;
  std::size_t n_, d_;
  double v0_;
  mutable std::vector<double> mean_, var_, time_;
};

}  // namespace

std::vector<History> all_histories(std::size_t n) {
  if (n < 1 || n > 6) throw std::invalid_argument("all_histories: n must be in [1, 6]");
  std::vector<int> live(n);
  for (std::size_t i = 0; i < n; ++i) live[i] = static_cast<int>(i);
  History prefix;
  std::vector<History> out;
  enumerate_rec(n, live, prefix, out);
  return out;
}

std::string canonical_topology(std::size_t n, const History& history) {
  if (n == 0 || history.size() + 1 != n)
    throw std::invalid_argument("canonical_topology: need a complete history of n - 1 merges");
  check_history(n, history);
  std::vector<int> min_leaf(2 * n - 1);
  for (std::size_t i = 0; i < n; ++i) min_leaf[i] = static_cast<int>(i);
  for (std::size_t k = 0; k < history.size(); ++k)
    min_leaf[n + k] = std::min(min_leaf[history[k].first], min_leaf[history[k].second]);
  return topology_string(n, history, static_cast<int>(2 * n - 2), min_leaf);
}

History history_of(const MergeTree& tree) {
  if (!tree.complete()) throw std::invalid_argument("history_of: the tree is not complete");
  History h;
  h.reserve(tree.merges.size());
  for (const Merge& m : tree.merges) {
    const int a = static_cast<int>(m.left), b = static_cast<int>(m.right);
    h.emplace_back(std::min(a, b), std::max(a, b));
  }
  check_history(tree.leaf_count, h);
  return h;
}

std::vector<double> merge_times_of(const MergeTree& tree) {
  std::vector<double> t;
  t.reserve(tree.merges.size());
  for (const Merge& m : tree.merges) t.push_back(-m.height);
  return t;
}

std::string canonical_topology(const MergeTree& tree) {
  return canonical_topology(tree.leaf_count, history_of(tree));
}

double log_prior_density(std::size_t n, const std::vector<double>& merge_times) {
  if (merge_times.size() >= std::max<std::size_t>(n, 1))
    throw std::invalid_argument("log_prior_density: more merges than n - 1");
  double T = 0.0, lp = 0.0;
  for (std::size_t k = 0; k < merge_times.size(); ++k) {
    const double delta = T - merge_times[k];
    if (!(delta >= 0.0))
      throw std::invalid_argument("log_prior_density: merge " + std::to_string(k) +
                                  " is later than the one before it");
    lp -= lambda_of(n - k) * delta;
    T = merge_times[k];
  }
  return lp;
}

double log_joint(const MergeTree& tree, const LogLikelihood& loglik) {
  const History h = history_of(tree);
  const std::vector<double> t = merge_times_of(tree);
  return log_prior_density(tree.leaf_count, t) + loglik(h, t);
}

Enumeration enumerate_exact(std::size_t n, const LogLikelihood& loglik,
                            const EnumerationOptions& options) {
  if (n < 1 || n > 5) throw std::invalid_argument("enumerate_exact: n must be in [1, 5]");
  Enumeration out;
  out.n = n;
  const DeQuadrature quad(options.rel_tol, options.max_refinements);
  std::vector<History> histories = all_histories(n);
  out.histories.resize(histories.size());
  std::vector<std::size_t> evaluations(histories.size(), 0);
  // Integrates history i with its own copy of the likelihood (scratch buffers are per copy).
  auto work = [&](std::size_t i, const LogLikelihood& ll) {
    HistoryMass& hm = out.histories[i];
    hm.merges = histories[i];
    hm.topology = n >= 2 ? canonical_topology(n, hm.merges) : std::string("0");
    if (n == 1) {
      hm.log_mass = ll(hm.merges, {});
      evaluations[i] = 1;
    } else {
      HistoryIntegrator integrator(n, hm.merges, ll, quad);
      hm.log_mass = integrator.log_mass();
      evaluations[i] = integrator.evaluations();
    }
  };
  const unsigned threads =
      std::max(1u, std::min<unsigned>(options.threads, static_cast<unsigned>(histories.size())));
  if (threads == 1) {
    for (std::size_t i = 0; i < histories.size(); ++i) work(i, loglik);
  } else {
    std::atomic<std::size_t> next{0};
    std::vector<std::exception_ptr> errors(threads);
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < threads; ++w) {
      pool.emplace_back([&, w] {
        try {
          const LogLikelihood ll = loglik;
          for (std::size_t i = next++; i < histories.size(); i = next++) work(i, ll);
        } catch (...) {
          errors[w] = std::current_exception();
          next = histories.size();
        }
      });
    }
    for (std::thread& t : pool) t.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  }
  for (std::size_t e : evaluations) out.likelihood_evaluations += e;
  double mx = -kInf;
  for (const HistoryMass& hm : out.histories) mx = std::max(mx, hm.log_mass);
  if (!(mx > -kInf)) {
    out.log_evidence = -kInf;
    return out;
  }
  double total = 0.0;
  for (const HistoryMass& hm : out.histories) total += std::exp(hm.log_mass - mx);
  out.log_evidence = mx + std::log(total);
  for (const HistoryMass& hm : out.histories) {
    const double p = std::exp(hm.log_mass - out.log_evidence);
    if (n >= 2) out.first_merge_posterior[hm.merges.front()] += p;
    out.topology_posterior[hm.topology] += p;
  }
  return out;
}

LogLikelihood brownian_log_likelihood(std::vector<double> x_row_major, std::size_t n, std::size_t d,
                                      double v0) {
  if (n == 0 || d == 0) throw std::invalid_argument("brownian_log_likelihood: n, d must be >= 1");
  if (x_row_major.size() != n * d)
    throw std::invalid_argument("brownian_log_likelihood: x must hold n*d values");
  if (!(v0 >= 0.0) || !std::isfinite(v0))
    throw std::invalid_argument("brownian_log_likelihood: v0 must be finite and >= 0");
  for (double v : x_row_major)
    if (std::isinf(v)) throw std::invalid_argument("brownian_log_likelihood: infinite value");
  return BrownianLikelihood(std::move(x_row_major), n, d, v0);
}

Enumeration enumerate_brownian(const std::vector<double>& x_row_major, std::size_t n, std::size_t d,
                               double v0, const EnumerationOptions& options) {
  LogLikelihood ll = brownian_log_likelihood(x_row_major, n, d, v0);
  if (v0 == 0.0) {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t k = i + 1; k < n; ++k) {
        std::size_t common = 0;
        bool equal = true;
        for (std::size_t j = 0; j < d; ++j) {
          const double a = x_row_major[i * d + j], b = x_row_major[k * d + j];
          if (std::isnan(a) || std::isnan(b)) continue;
          ++common;
          if (a != b) equal = false;
        }
        if (equal && common >= 2)
          throw std::invalid_argument("enumerate_brownian: rows " + std::to_string(i) + " and " +
                                      std::to_string(k) +
                                      " coincide and v0 = 0: the evidence is infinite");
      }
    }
  }
  return enumerate_exact(n, ll, options);
}

double log_evidence_two_points(double eps, std::size_t d) {
  if (!(eps > 0.0)) throw std::invalid_argument("log_evidence_two_points: eps must be > 0");
  const double dd = static_cast<double>(d);
  const double p = 1.0 - 0.5 * dd;
  const double k = boost::math::cyl_bessel_k(p, std::sqrt(eps));
  return -0.5 * dd * std::log(4.0 * std::numbers::pi) + std::log(2.0) +
         0.5 * p * std::log(0.25 * eps) + std::log(k);
}

}  // namespace kingman::oracle
