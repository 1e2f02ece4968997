// The optimal merge time of a pair whose shared columns have different mutation rates. With one
// rate the objective is unimodal (discrete_merge_time.cpp); with several it need not be (an
// agreeing column with a fast rate can make it rise again near the boundary), so unimodality is
// proved piece by piece before a single root is trusted, and a dense scan handles the rest.
//
// In time t = latest - depth, the slope of rate * t + log Z_C(t) is
//   D(t) = rate - P(t) + N(t),  P = sum_{A_d > 0} 2 lambda_d A_d x_d / Z^d,
//                               N = sum_{A_d < 0} 2 lambda_d |A_d| x_d / Z^d,
// with A_d = 1 - S_d and x_d = e^{lambda_d (2t - t_l - t_r)}; P, N and P' are nondecreasing in
// t. Three certificates classify a piece [t_a, t_b]:
//  - rising: rate - P(t_b) + N(t_a) > 0, so D > 0 on it;
//  - falling: rate - P(t_a) + N(t_b) < 0, so D < 0 on it;
//  - decreasing: P'(t_a) >= sum_{A_d < 0} 4 lambda_d^2 |A_d| x_d(t_b) / (1 + |A_d| x_d(t_a))^2,
//    an upper bound of N' on the piece, so D' <= 0 on it;
// and one covers everything from a time t_o to the boundary:
//  - ordered: every disagreeing column's elasticity lambda_d / Z^d (of its term of D, in e^y) is
//    at least every agreeing column's. Disagreeing elasticities grow with t and agreeing ones
//    shrink, so this persists up to the boundary; there, with g of an intermediate elasticity,
//    (P - N) / g is nondecreasing, so once P - N reaches rate it stays above: D changes sign
//    at most once, from + to -, and never back.
// D > 0 deep down; if after its first + to - change no piece can be positive again, that change
// is the unique maximum (or the boundary if there is none).
#include "discrete_merge_time_per_column.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "bracketed_root.hpp"

namespace kingman::detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kGridPoints = 64;  // depths of the fallback scan
constexpr int kMaxSplits = 40;   // certification work before falling back to the scan

// What the certificates need at one time t = latest - depth.
struct Probe {
  double depth = 0.0;
  double falling = 0.0;            // P(t)
  double rising = 0.0;             // N(t)
  double falling_curvature = 0.0;  // P'(t)
  double min_disagreeing_elasticity = kInf;
  double max_agreeing_elasticity = 0.0;
  // x_d(t) of the agreeing columns, in column order: at agreeing_x in the certificates' pool.
  std::size_t agreeing_x = 0;

  double slope(double rate) const { return rate - falling + rising; }
  bool ordered() const { return min_disagreeing_elasticity >= max_agreeing_elasticity; }
};

class SlopeCertificates {
 public:
  // `pool` holds the probes' agreeing x values (emptied here; a probe appends its own), so
  // that probing allocates nothing once the pool has grown.
  SlopeCertificates(const DiscretePair& pair, double rate, std::vector<double>& pool)
      : pair_(pair), rate_(rate), pool_(pool) {
    pool_.clear();
  }

  Probe probe(double depth) const {
    Probe p;
    p.depth = depth;
    p.agreeing_x = pool_.size();
    const double offset = 2.0 * (pair_.latest_time() - depth) - pair_.time_sum();
    for (std::size_t k = 0; k < pair_.shared_columns(); ++k) {
      const double a = 1.0 - pair_.overlap(k);
      if (a == 0.0) continue;
      const double lambda = pair_.rate(k);
      const double y = lambda * offset;
      const double x = std::exp(y);
      // 1 - x is exact for x >= 1/2 and accurate below; expm1 only matters for tiny |y|.
      const double z = (y > -1e-3 ? -std::expm1(y) : 1.0 - x) + x * pair_.overlap(k);
      if (a > 0.0) {
        p.falling += z > 0.0 ? 2.0 * lambda * a * x / z : kInf;
        p.falling_curvature += z > 0.0 ? 4.0 * lambda * lambda * a * x / (z * z) : kInf;
        p.min_disagreeing_elasticity = std::min(p.min_disagreeing_elasticity, lambda / z);
      } else {
        p.rising += 2.0 * lambda * (-a) * x / z;
        p.max_agreeing_elasticity = std::max(p.max_agreeing_elasticity, lambda / z);
        pool_.push_back(x);
      }
    }
    return p;
  }

  // `deep` is the earlier end of the piece (larger depth).
  bool rising(const Probe& deep, const Probe& shallow) const {
    return rate_ - shallow.falling + deep.rising > 0.0;
  }
  bool falling(const Probe& deep, const Probe& shallow) const {
    return rate_ - deep.falling + shallow.rising < 0.0;
  }
  bool decreasing(const Probe& deep, const Probe& shallow) const {
    double bound = 0.0;
    std::size_t i = 0;
    for (std::size_t k = 0; k < pair_.shared_columns(); ++k) {
      const double a = 1.0 - pair_.overlap(k);
      if (!(a < 0.0)) continue;
      const double lambda = pair_.rate(k);
      const double low = 1.0 - a * pool_[deep.agreeing_x + i];
      bound += 4.0 * lambda * lambda * (-a) * pool_[shallow.agreeing_x + i] / (low * low);
      ++i;
    }
    return deep.falling_curvature >= bound;
  }

 private:
  const DiscretePair& pair_;
  double rate_;
  std::vector<double>& pool_;
};

// The root of the slope on [latest - deep, latest - shallow], where it goes from + to -.
double slope_root(const DiscretePair& pair, double rate, double deep, double shallow) {
  auto falling = [&](double t, double& derivative) {
    double slope = 0.0, curvature = 0.0;
    pair.log_local_likelihood_derivatives(t, slope, curvature);
    derivative = -curvature;
    return -(rate + slope);
  };
  const double latest = pair.latest_time();
  return std::min(latest, bracketed_root(falling, latest - deep, latest - shallow));
}

// The unique maximum into `optimum` when the certificates prove there is one (true), else false.
// (A bool and an out-parameter: with std::optional<double>, GCC 12 under the sanitizers warned
// that the empty optional's value "may be used uninitialized".)
bool certified_optimum(const DiscretePair& pair, double rate, double far, double& optimum) {
  thread_local std::vector<double> pool;
  const SlopeCertificates certificates(pair, rate, pool);
  const double latest = pair.latest_time();
  struct Piece {
    Probe deep, shallow;
  };
  thread_local std::vector<Piece> stack;  // the deepest piece on top
  stack.clear();
  stack.push_back({certificates.probe(far), certificates.probe(0.0)});
  bool crossed = false;      // the slope has gone from + to -
  double crossing = latest;  // where
  int splits = 0;
  while (!stack.empty()) {
    const Piece piece = std::move(stack.back());
    stack.pop_back();
    const Probe& a = piece.deep;
    const Probe& b = piece.shallow;
    const double slope_a = a.slope(rate), slope_b = b.slope(rate);
    if (a.ordered()) {  // covers [t_a, latest]
      if (crossed) {
        optimum = crossing;
        return slope_a <= 0.0;
      }
      if (!(slope_a > 0.0)) {
        optimum = latest - a.depth;
      } else if (!(rate + pair.log_local_likelihood_slope(latest) < 0.0)) {
        optimum = latest;
      } else {
        optimum = slope_root(pair, rate, a.depth, 0.0);
      }
      return true;
    }
    if (certificates.rising(a, b)) {
      if (crossed) return false;  // positive again after a crossing: maybe bimodal
      continue;
    }
    const bool falling = certificates.falling(a, b);
    if (falling || certificates.decreasing(a, b)) {
      if (!crossed && !(slope_a > 0.0)) {
        crossed = true;
        crossing = latest - a.depth;
      } else if (!crossed && !(slope_b > 0.0)) {
        crossed = true;
        crossing = slope_root(pair, rate, a.depth, b.depth);
      } else if (crossed && slope_a > 0.0) {
        return false;
      }
      continue;
    }
    if (++splits > kMaxSplits || a.depth - b.depth <= 1e-12 * a.depth) return false;
    // Geometric halving; pieces that reach the boundary are halved in depth.
    const double middle = b.depth > 0.0 ? std::sqrt(a.depth * b.depth) : 0.5 * a.depth;
    Probe m = certificates.probe(middle);
    stack.push_back({m, b});
    stack.push_back({a, std::move(m)});
  }
  optimum = crossed ? crossing : latest;
  return true;
}

// When the certificates fail: scan the slope on a geometric grid of depths, refine every + to
// - sign change, keep the best local maximum (or the boundary). Two sign changes closer than
// one grid step could be missed.
double scanned_optimum(const DiscretePair& pair, double rate, double far, double near) {
  const double latest = pair.latest_time();
  auto slope = [&](double t) { return rate + pair.log_local_likelihood_slope(t); };
  const double ratio = std::pow(near / far, 1.0 / (kGridPoints - 1));
  double best_time = latest, best_value = -kInf;
  auto consider = [&](double t) {
    const double value = rate * t + pair.log_local_likelihood(t);
    if (value > best_value) {
      best_value = value;
      best_time = t;
    }
  };
  double depth_before = far;
  double slope_before = slope(latest - far);
  for (int i = 1; i <= kGridPoints; ++i) {
    const double depth = i < kGridPoints ? far * std::pow(ratio, i) : 0.0;
    const double slope_here = slope(latest - depth);
    if (slope_before > 0.0 && !(slope_here > 0.0)) {
      consider(slope_root(pair, rate, depth_before, depth));
    }
    depth_before = depth;
    slope_before = slope_here;
  }
  if (slope_before > 0.0) consider(latest);
  return best_time;
}

}  // namespace

double per_column_rate_optimum(const DiscretePair& pair, double rate) {
  const double latest = pair.latest_time();
  double lambda_min = kInf, lambda_max = 0.0;
  for (std::size_t k = 0; k < pair.shared_columns(); ++k) {
    lambda_min = std::min(lambda_min, pair.rate(k));
    lambda_max = std::max(lambda_max, pair.rate(k));
  }
  // Deep enough, the slope is surely positive: a disagreeing column (A_d > 0) lowers it by at
  // most 4 lambda_d A_d x_d while A_d x_d <= 1/2, and agreeing columns only raise it.
  auto surely_rising = [&](double depth) {
    double fall = 0.0;
    for (std::size_t k = 0; k < pair.shared_columns(); ++k) {
      const double a = 1.0 - pair.overlap(k);
      if (a <= 0.0) continue;
      const double x = std::exp(pair.rate(k) * (2.0 * (latest - depth) - pair.time_sum()));
      if (a * x > 0.5) return false;
      fall += 4.0 * pair.rate(k) * a * x;
    }
    return fall < 0.5 * rate;
  };
  double far = 1.0 / lambda_min;
  while (!surely_rising(far)) far *= 2.0;
  if (double optimum; certified_optimum(pair, rate, far, optimum)) return optimum;
  return scanned_optimum(pair, rate, far, std::min(far, 1e-9 / lambda_max));
}

}  // namespace kingman::detail
