#include "kingman/inference/discrete_merge_time.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "bracketed_root.hpp"
#include "discrete_merge_time_per_column.hpp"

namespace kingman {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One rate lambda: in y = lambda (2t - t_l - t_r) <= y_max the objective is
// beta y + sum_d log(1 - A_d e^y) with beta = rate / (2 lambda); its slope is beta - h(e^y).
double common_rate_optimum(const DiscretePair& pair, double rate) {
  const double lambda = pair.rate(0);
  const double beta = rate / (2.0 * lambda);
  const double y_max = lambda * (2.0 * pair.latest_time() - pair.time_sum());
  // h(e^y) - beta and its derivative in y, x h'(x) = sum_d x A_d / (Z^d)^2.
  auto excess = [&](double y, double& derivative) {
    const double x = std::exp(y), one_minus_x = -std::expm1(y);
    double h = 0.0;
    derivative = 0.0;
    for (std::size_t k = 0; k < pair.shared_columns(); ++k) {
      const double s = pair.overlap(k);
      const double z = one_minus_x + x * s;
      if (!(z > 0.0)) {
        derivative = kInf;
        return kInf;  // Z^d = 0 at the boundary: the slope is -inf there
      }
      const double inverse = 1.0 / z;
      const double w = x * (1.0 - s) * inverse;
      h += w;
      derivative += w * inverse;
    }
    return h - beta;
  };
  double unused = 0.0;
  if (excess(y_max, unused) <= 0.0) return pair.latest_time();  // still rising at the boundary
  // For x <= 1/2 each term with A_d > 0 is at most 2 A_d x (and A_d <= 1), others are negative,
  // so h(x) <= beta / 2 at x = beta / (4 sum_{A_d > 0} A_d): a lower end of the bracket.
  double disagreement = 0.0;
  for (std::size_t k = 0; k < pair.shared_columns(); ++k)
    disagreement += std::max(0.0, 1.0 - pair.overlap(k));
  const double y_lo = std::log(std::min(0.5, beta / (4.0 * disagreement)));
  if (!(y_lo < y_max)) return pair.latest_time();
  const double y = detail::bracketed_root(excess, y_lo, y_max);
  return std::min(pair.latest_time(), 0.5 * (y / lambda + pair.time_sum()));
}

}  // namespace

double optimal_merge_time(const DiscretePair& pair, double rate) {
  if (pair.shared_columns() == 0) return pair.latest_time();
  return pair.common_rate() ? common_rate_optimum(pair, rate)
                            : detail::per_column_rate_optimum(pair, rate);
}

}  // namespace kingman
