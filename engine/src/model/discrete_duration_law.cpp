#include "discrete_duration_law.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "kingman/error.hpp"
#include "kingman/kernels/vector_math.hpp"

namespace kingman {

double log_lower_share_upper_bound(const DiscretePair& pair, double rate, double start_time,
                                   double delta0) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (!(delta0 > 0.0) || !(rate > 0.0)) return kInf;
  const double offset = (start_time - pair.latest_time()) * 2.0 -
                        (pair.time_sum() - 2.0 * pair.latest_time());  // 2 T0 - t_l - t_r <= 0
  // At a point delta: the sums of log Z^d over the columns where Z^d rises (S_d < 1) and where
  // it falls (S_d > 1); on [a, b] the density is at most e^{-rate a} e^{rising(b) + falling(a)}
  // and at least e^{-rate b} e^{rising(a) + falling(b)}.
  struct Sums {
    double rising = 0.0, falling = 0.0;
  };
  auto sums_at = [&](double delta) {
    Sums sums;
    for (std::size_t k = 0; k < pair.shared_columns(); ++k) {
      const double overlap = pair.overlap(k);
      if (overlap == 1.0) continue;
      const double y = pair.rate(k) * (std::min(offset, 0.0) - 2.0 * delta);
      const double log_z = std::log(-std::expm1(y) + std::exp(y) * overlap);
      (overlap < 1.0 ? sums.rising : sums.falling) += log_z;
    }
    return sums;
  };
  auto log_add = [](double a, double b) {
    if (a < b) std::swap(a, b);
    return b == -kInf ? a : a + std::log1p(std::exp(b - a));
  };
  // The mass below delta0, piece by piece: [0, delta0 / 64], then doubling to delta0.
  constexpr int kPieces = 7;
  double log_below = -kInf;
  Sums left = sums_at(0.0);
  double a = 0.0;
  for (int i = kPieces - 1; i >= 0; --i) {
    const double b = std::ldexp(delta0, -i);
    const Sums right = sums_at(b);
    log_below = log_add(log_below, std::log(b - a) - rate * a + right.rising + left.falling);
    left = right;
    a = b;
  }
  // The whole mass: at least the sum over pieces 0, w/16, w/8, ... out to 64 w (w = 1 / rate).
  const double width = 1.0 / rate;
  double log_mass = -kInf;
  left = sums_at(0.0);
  a = 0.0;
  for (double b = width / 16.0; b <= 64.0 * width; b *= 2.0) {
    const Sums right = sums_at(b);
    log_mass = log_add(log_mass, std::log(b - a) - rate * b + left.rising + right.falling);
    left = right;
    a = b;
  }
  if (!(log_mass > -kInf) || std::isnan(log_below)) return kInf;
  return log_below - log_mass + std::numbers::ln2;
}

void DiscreteDurationLaw::assign(const DiscretePair& pair, double rate, double start_time) {
  if (!(rate > 0.0) || !std::isfinite(rate)) {
    throw OptionError("merge-duration law: the rate must be finite and > 0, got " +
                      std::to_string(rate));
  }
  if (!(start_time <= pair.latest_time())) {
    throw OptionError("merge-duration law: start time " + std::to_string(start_time) +
                      " is later than the pair's latest merge time " +
                      std::to_string(pair.latest_time()));
  }
  lambda_ = rate;
  common_rate_ = pair.common_rate();
  columns_.clear();
  double rate_sum = 0.0;
  const double offset = (start_time - pair.latest_time()) * 2.0 -
                        (pair.time_sum() - 2.0 * pair.latest_time());  // 2 T0 - t_l - t_r <= 0
  for (std::size_t k = 0; k < pair.shared_columns(); ++k) {
    // A column with S_d = 1 has Z^d = 1 at every time: it changes nothing.
    if (pair.overlap(k) == 1.0) continue;
    columns_.push_back({pair.overlap(k), pair.rate(k), pair.rate(k) * std::min(offset, 0.0)});
    rate_sum += pair.rate(k);
  }
  if (columns_.empty()) {
    set_exponential(rate, start_time);  // Z = 1
    return;
  }
  integrate(rate, start_time, 1.0 / (rate + 2.0 * rate_sum), 0.0);
}

double DiscreteDurationLaw::log_density(double delta) const {
  double log_f = -lambda_ * delta;
  if (columns_.empty()) return log_f;
  // Z^d = (1 - x) + x S_d: two terms >= 0, so a small Z^d keeps its relative accuracy.
  LogProduct z;
  if (common_rate_) {
    const double y = columns_.front().log_x_start - 2.0 * columns_.front().rate * delta;
    const double x = std::exp(y), one_minus_x = -std::expm1(y);
    for (const Column& c : columns_) z.multiply(one_minus_x + x * c.overlap);
  } else {
    for (const Column& c : columns_) {
      const double y = c.log_x_start - 2.0 * c.rate * delta;
      z.multiply(-std::expm1(y) + std::exp(y) * c.overlap);
    }
  }
  return log_f + z.log();
}

void DiscreteDurationLaw::log_density_batch(const double* deltas, double* out,
                                            std::size_t count) const {
  for (std::size_t i = 0; i < count; ++i) out[i] = -lambda_ * deltas[i];
  if (columns_.empty()) return;
  thread_local std::vector<double> y, x, one_minus_x, z;
  y.resize(count);
  x.resize(count);
  one_minus_x.resize(count);
  z.resize(count);
  auto exps = [&](const Column& c) {
    for (std::size_t i = 0; i < count; ++i) y[i] = c.log_x_start - 2.0 * c.rate * deltas[i];
    kernels::exp_with_complement_array(y.data(), x.data(), one_minus_x.data(), count);
  };
  if (common_rate_) exps(columns_.front());
  for (const Column& c : columns_) {
    if (!common_rate_) exps(c);
    // Z^d = (1 - x) + x S_d: two terms >= 0. log_array takes positive normal numbers: a Z^d of
    // 0 (x = 1 with S_d = 0, at delta = 0) or below the smallest normal goes the scalar way.
    bool tiny = false;
    for (std::size_t i = 0; i < count; ++i) {
      z[i] = one_minus_x[i] + x[i] * c.overlap;
      tiny |= !(z[i] >= std::numeric_limits<double>::min());
    }
    if (tiny) {
      for (std::size_t i = 0; i < count; ++i) out[i] = log_density(deltas[i]);
      return;
    }
    kernels::log_array(z.data(), z.data(), count);
    for (std::size_t i = 0; i < count; ++i) out[i] += z[i];
  }
}

double DiscreteDurationLaw::log_tail_bound(double length) const {
  double log_bound = -lambda_ * length - std::log(lambda_);
  for (const Column& c : columns_) {
    const double y = c.log_x_start - 2.0 * c.rate * length;
    const double z = -std::expm1(y) + std::exp(y) * c.overlap;
    if (z > 1.0) log_bound += std::log(z);
  }
  return log_bound;
}

}  // namespace kingman
