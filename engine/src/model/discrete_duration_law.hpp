#pragma once
// The law of one pair's merge duration under the binary / multinomial model (MODEL.md sections 5,
// 6 and 7), integrated by AdaptiveDurationLaw. With total rate lambda and current time
// T0 <= min(t_l, t_r), a merge of the pair after a duration delta >= 0 (at time T0 - delta) has
// the unnormalized density
//   f(delta) = e^{-lambda delta} Z_C(T0 - delta),
// Z_C = prod over shared columns of Z^d = 1 + x_d (S_d - 1), x_d = e^{lambda_d (2(T0 - delta) -
// t_l - t_r)}.
//
// There is no closed form. f is an entire function of delta (Z_C is a finite sum of
// exponentials), so Gauss-Kronrod G7K15 converges fast on panels of the width over which
// the exponentials change (1 / (lambda + 2 sum lambda_d)), laid from 0. The tail has a rigorous
// bound: x_d decreases in delta, so Z^d moves monotonically from Z^d(L) towards 1 and on
// [L, inf) Z_C <= B(L) = prod_d max(1, Z^d(L)), hence the tail is at most B(L) e^{-lambda L} /
// lambda.
#include <cstddef>
#include <vector>

#include "adaptive_duration_law.hpp"
#include "kingman/model/discrete_messages.hpp"

namespace kingman {

// An upper bound on the log of the share of the mass of DiscreteDurationLaw(pair, rate,
// start_time) that lies below delta0 > 0, for a few dozen exps per column: Z^d moves
// monotonically from Z^d(0) towards 1 (up where S_d < 1, down where S_d > 1), so on a piece
// [a, b] the density lies between e^{-rate b} prod_d min(Z^d(a), Z^d(b)) and e^{-rate a}
// prod_d max(Z^d(a), Z^d(b)). The mass below delta0 is at most the sum of the upper values
// times the lengths over pieces [0, delta0 / 64], ... doubling to delta0; the whole mass at
// least that of the lower values over pieces from 0, 1 / (16 rate), ... doubling to
// 64 / rate. Then times 2, for rounding. The race skips the per-column-rate clocks it shows
// cannot ring before a threshold (race_discrete.cpp).
double log_lower_share_upper_bound(const DiscretePair& pair, double rate, double start_time,
                                   double delta0);

class DiscreteDurationLaw final : public AdaptiveDurationLaw {
 public:
  DiscreteDurationLaw() = default;
  // rate = lambda > 0, start_time = T0 <= pair.latest_time(). Throws OptionError otherwise.
  DiscreteDurationLaw(const DiscretePair& pair, double rate, double start_time) {
    assign(pair, rate, start_time);
  }
  // Rebuilds the law for another pair, reusing this object's storage.
  void assign(const DiscretePair& pair, double rate, double start_time);

  double log_density(double delta) const override;
  // The density at a batch of deltas, a column at a time over the whole batch: x_d and 1 - x_d
  // by the vectorized exp_with_complement_array, log Z^d by log_array (log_density calls
  // libm's expm1, exp and log per column and delta). Within a few ulps per column of it.
  void log_density_batch(const double* deltas, double* out, std::size_t count) const override;

 private:
  struct Column {
    double overlap;      // S_d
    double rate;         // lambda_d
    double log_x_start;  // log x_d at delta = 0: lambda_d (2 T0 - t_l - t_r) <= 0
  };

  double log_tail_bound(double length) const override;

  double lambda_ = 1.0;  // the total rate, as rate()
  bool common_rate_ = true;
  std::vector<Column> columns_;
};

}  // namespace kingman
