#include "brute_force_greedy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

namespace kingman::oracle {

// Computed in long double: the reference must be more accurate than what it checks (the
// closed forms cancel for small lambda*eps, which the engine avoids by rationalizing).
using real = long double;
namespace {

struct Cluster {
  std::size_t id = 0;
  std::vector<real> mean;  // y-hat
  real var = 0.0;          // v
  real time = 0.0;         // t <= 0
};

real squared_distance(const std::vector<real>& a, const std::vector<real>& b) {
  real e = 0.0;
  for (std::size_t j = 0; j < a.size(); ++j) {
    const real diff = a[j] - b[j];
    e += diff * diff;
  }
  return e;
}

real log_local_z(real s, real eps, std::size_t d) {
  return -0.5 * static_cast<real>(d) * std::log(2.0 * std::numbers::pi_v<real> * s) -
         eps / (2.0 * s);
}

}  // namespace

GreedyReference brute_force_greedy(const std::vector<double>& x_row_major, std::size_t n,
                                   std::size_t d, double v0, Variant variant) {
  if (n == 0 || d == 0) throw std::invalid_argument("brute_force_greedy: n and d must be >= 1");
  if (x_row_major.size() != n * d)
    throw std::invalid_argument("brute_force_greedy: x has " + std::to_string(x_row_major.size()) +
                                " values, expected n*d = " + std::to_string(n * d));
  if (!(v0 >= 0.0) || !std::isfinite(v0))
    throw std::invalid_argument("brute_force_greedy: v0 must be finite and >= 0");
  for (std::size_t k = 0; k < x_row_major.size(); ++k)
    if (!std::isfinite(x_row_major[k]))
      throw std::invalid_argument("brute_force_greedy: non-finite value at row " +
                                  std::to_string(k / d) + ", column " + std::to_string(k % d));

  const real dd = static_cast<real>(d);
  std::vector<Cluster> live;
  live.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    Cluster c;
    c.id = i;
    c.mean.assign(x_row_major.begin() + static_cast<std::ptrdiff_t>(i * d),
                  x_row_major.begin() + static_cast<std::ptrdiff_t>((i + 1) * d));
    c.var = v0;
    c.time = 0.0;
    live.push_back(std::move(c));
  }

  GreedyReference out;
  out.tree.leaf_count = n;
  real log_joint = 0.0;
  real T = 0.0;  // time of the last merge

  for (std::size_t k = 0; k + 1 < n; ++k) {
    const std::size_t m = live.size();
    const real lambda = 0.5 * static_cast<real>(m) * static_cast<real>(m - 1);

    // live is kept sorted by node id, so (a, b) with a < b visits pairs in id order.
    std::size_t best_a = 0, best_b = 1;
    real best_score = -std::numeric_limits<real>::infinity();
    real best_time = 0.0;  // the merge time t of the best pair
    bool have_best = false;
    for (std::size_t a = 0; a < m; ++a) {
      for (std::size_t b = a + 1; b < m; ++b) {
        const Cluster& l = live[a];
        const Cluster& r = live[b];
        const real eps = squared_distance(l.mean, r.mean);
        const real rc = l.var + r.var + (l.time - T) + (r.time - T);
        real score = 0.0;  // larger is better
        real t = 0.0;      // merge time if chosen
        switch (variant) {
          case Variant::minduration: {
            const real delta =
                (std::sqrt(dd * dd + 4.0 * lambda * eps) - dd) / (4.0 * lambda) - 0.5 * rc;
            score = -delta;
            t = T - std::max<real>(delta, 0.0L);
            break;
          }
          case Variant::mgreedy: {
            const real lt = 1.0 - 0.5 * dd;
            const real delta = (lt + std::sqrt(lt * lt + lambda * eps)) / (2.0 * lambda) - 0.5 * rc;
            score = -delta;
            t = T - std::max<real>(delta, 0.0L);
            break;
          }
          case Variant::maxprob: {
            const real delta = std::max<real>(
                (std::sqrt(dd * dd + 4.0 * lambda * eps) - dd) / (4.0 * lambda) - 0.5 * rc, 0.0L);
            const real s = rc + 2.0 * delta;
            score = -lambda * delta + log_local_z(s, eps, d);
            if (std::isnan(score)) score = std::numeric_limits<real>::infinity();  // s == 0
            t = T - delta;
            break;
          }
          case Variant::rate1: {
            const real u = 0.5 * (std::sqrt(dd * dd + 4.0 * eps) - dd);
            const real tc = 0.5 * (l.var + r.var + l.time + r.time - u);
            score = tc;
            t = std::min(tc, T);
            break;
          }
        }
        if (!have_best || score > best_score) {
          have_best = true;
          best_score = score;
          best_a = a;
          best_b = b;
          best_time = t;
        }
      }
    }

    Cluster& l = live[best_a];
    Cluster& r = live[best_b];
    const real t = best_time;
    const real sl = l.var + l.time - t;
    const real sr = r.var + r.time - t;
    const real s = sl + sr;
    if (!(s > 0.0) || !(sl >= 0.0) || !(sr >= 0.0))
      throw std::invalid_argument(
          "brute_force_greedy: merge of nodes " + std::to_string(l.id) + " and " +
          std::to_string(r.id) +
          " has zero variance (duplicate points with v0 = 0); use a leaf variance v0 > 0");
    const real eps = squared_distance(l.mean, r.mean);
    const real delta = T - t;
    log_joint += -lambda * delta + log_local_z(s, eps, d);

    Cluster merged;
    merged.id = n + k;
    merged.time = t;
    if (sl == 0.0) {
      merged.var = 0.0;
      merged.mean = l.mean;
    } else if (sr == 0.0) {
      merged.var = 0.0;
      merged.mean = r.mean;
    } else {
      merged.var = 1.0 / (1.0 / sl + 1.0 / sr);
      merged.mean.resize(d);
      for (std::size_t j = 0; j < d; ++j)
        merged.mean[j] = merged.var * (l.mean[j] / sl + r.mean[j] / sr);
    }
    out.tree.merges.push_back(
        Merge{std::min(l.id, r.id), std::max(l.id, r.id), static_cast<double>(-t)});
    T = t;

    // Remove b then a (b > a), append the new cluster (largest id, keeps the order sorted).
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(best_b));
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(best_a));
    live.push_back(std::move(merged));
  }
  out.log_joint = static_cast<double>(log_joint);
  return out;
}

}  // namespace kingman::oracle
