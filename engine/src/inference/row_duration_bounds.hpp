#pragma once
// Lower bounds on the rows' merge durations at later steps, which let Greedy-MinDuration and
// MGreedy on complete data rescore only the rows that can hold the step's choice instead of every
// live pair (greedy_rescan.cpp).
//
// Why they hold: a pair's duration at rate lambda and current time T is
//     delta(lambda, T) = (s*(lambda) - r) / 2,   r = a_l + a_r - 2 T,
// with s*(lambda) the mode in s (mode_durations.hpp), the positive root of lambda s^2 + d s - eps
// in linear scale and of lambda s^2 - (2 - d) s - eps in log scale: decreasing in lambda in both
// (ds*/dlambda = -s*^2 / (2 lambda s* + d) and -s*^2 / (2 lambda s* + d - 2), both denominators
// being 2 sqrt(...) > 0). The pair's offsets a_l, a_r and distance eps stay while both clusters
// live, and the rate falls from step to step, so from a step at (lambda0, T0) to a later one at
// (lambda1 <= lambda0, T1 <= T0):
//     delta(lambda1, T1) >= delta(lambda0, T0) - (T0 - T1),
// i.e. delta - T never decreases. A row's smallest delta - T at some step therefore bounds every
// later delta - T of its pairs; a pair that joins the row later (a new cluster's) lowers the
// bound to its own, and pairs that leave only make it looser.
//
// The durations compared are computed ones, each within ~1e-15 (|delta| + |a_l + a_r| + |T|) of
// the exact (a handful of roundings in s*, r and their difference): both when a bound is made
// and when it is used, slacks of kSlackRelative times such sums (over 1 000 times that) keep
// the bounds below the computed durations. So a row whose bound lies above the step's best
// computed duration holds no pair that a full rescan could choose, nor tie with it.
//
// Floors that follow the rate (follow_rate; the Brownian modes). delta - T = (s*(lambda) - a_l -
// a_r) / 2 depends on the rate alone, and s*(lambda1) - s*(lambda0) for lambda1 < lambda0 grows
// with eps (its derivative in eps, 1/sqrt(c^2 + 4 lambda eps) with c = d or d - 2, falls with
// lambda). So with g(lambda) = s*(lambda, eps_lb) / 2 for an eps_lb at most every pair's eps,
// delta - T - g(lambda) never decreases either, and a row keeps min (delta - T - g) with its
// smallest eps so far: its floor at a later rate is that plus g there. For the row's nearest pair
// that floor is its duration exactly, where the plain bound stays at its old value. When a pair
// with a smaller eps joins, the key moves to the new eps at the current rate (valid for every
// later one: key + g_old(lambda) - g_new(lambda)). Each g carries a slack of 8 kSlackRelative |g|
// against its handful of roundings. At 10 000 points MinDuration then rescores 37 440 rows
// where the plain bounds left 149 582 (bench/RESULTS.md, Engine: greedy, thirty-fifth session).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "kingman/kernels/mode_durations.hpp"

namespace kingman::detail {

class RowDurationBounds {
 public:
  static constexpr double kSlackRelative = 1e-12;

  explicit RowDurationBounds(std::size_t slots)
      : key_(slots, kInf), offset_sum_(slots, 0.0), eps_lb_(slots, kInf) {}

  // Floors that follow the rate (above), for the modes in `scale` over `dims` dimensions.
  void follow_rate(kernels::ModeScale scale, double dims) {
    follows_rate_ = true;
    scale_ = scale;
    dims_ = dims;
  }
  bool follows_rate() const { return follows_rate_; }

  // Row `slot` holds no pair yet (a new cluster's, or a slot's first row).
  void clear(std::size_t slot) {
    key_[slot] = kInf;
    offset_sum_[slot] = 0.0;
    eps_lb_[slot] = kInf;
  }

  // A pair of row `slot` whose computed duration at current time `time` and rate `lambda` is
  // `duration`; at most `offset_sum` = max |a_l + a_r| over the pairs added since clear (an
  // upper bound will do); eps at least the smallest squared distance of the pairs added (+inf
  // where the floors do not follow the rate).
  void add(std::size_t slot, double duration, double offset_sum, double time, double eps,
           double lambda) {
    const double slack = kSlackRelative * (4.0 * std::abs(duration) + 2.0 * std::abs(offset_sum) +
                                           4.0 * std::abs(time));
    if (follows_rate_ && eps < eps_lb_[slot]) {
      if (key_[slot] != kInf)
        key_[slot] += lowered(rate_part(lambda, eps_lb_[slot])) - raised(rate_part(lambda, eps));
      eps_lb_[slot] = eps;
    }
    key_[slot] =
        std::min(key_[slot], (duration - time) - slack - raised(rate_part(lambda, eps_lb_[slot])));
    offset_sum_[slot] = std::max(offset_sum_[slot], std::abs(offset_sum));
  }

  // The part of floor_part that depends on the row alone: floor_part is base + time less a
  // slack term common to all rows, so rows with base at most some threshold are found by a
  // search over a row-ordered copy of the bases (greedy_rescan.cpp) and then tested exactly.
  double base(std::size_t slot, double lambda) const {
    const double key = key_[slot];
    if (key == kInf) return key;  // no pair (not inf - inf)
    return (key + lowered(rate_part(lambda, eps_lb_[slot]))) -
           kSlackRelative * (2.0 * offset_sum_[slot] + std::abs(key));
  }

  // out[x] = base(slots[x], lambda) for x < count, the rate parts in one vectorized call.
  void bases(const std::size_t* slots, std::size_t count, double lambda, double* out) {
    if (!follows_rate_) {
      for (std::size_t x = 0; x < count; ++x) out[x] = base(slots[x], lambda);
      return;
    }
    eps_buffer_.resize(count);
    zeros_.assign(count, 0.0);
    for (std::size_t x = 0; x < count; ++x) {
      const double eps = eps_lb_[slots[x]];
      eps_buffer_[x] = eps == kInf ? 0.0 : eps;  // rows without pairs: their base is +inf anyway
    }
    kernels::mode_durations(scale_, lambda, dims_, eps_buffer_.data(), zeros_.data(),
                            eps_buffer_.data(), count);
    for (std::size_t x = 0; x < count; ++x) {
      const double key = key_[slots[x]];
      out[x] = key == kInf ? kInf
                           : (key + lowered(eps_buffer_[x])) -
                                 kSlackRelative * (2.0 * offset_sum_[slots[x]] + std::abs(key));
    }
  }

  // The part of row `slot`'s floor that does not depend on the step's best duration (below).
  double floor_part(std::size_t slot, double time, double lambda) const {
    const double key =
        key_[slot] == kInf ? kInf : key_[slot] + lowered(rate_part(lambda, eps_lb_[slot]));
    if (key == kInf) return key;  // no pair
    const double slack =
        kSlackRelative * (2.0 * offset_sum_[slot] + 4.0 * std::abs(time) + std::abs(key));
    return (key + time) - slack;
  }

  // The row's floor from its floor_part: a value at most every computed duration that the row's
  // pairs can have at that time and that is at most `best`, so that the row can hold a pair of
  // duration <= best only if this is <= best. Nondecreasing in the part, so rows taken in the
  // order of their parts are taken in the order of their floors.
  static double floor(double part, double best) {
    return part - kSlackRelative * 4.0 * std::abs(best);
  }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  // g(lambda) = s*(lambda, eps) / 2 (the mode duration at offset 0), 0 where the floors do not
  // follow the rate or the row has no pair.
  double rate_part(double lambda, double eps) const {
    if (!follows_rate_ || eps == kInf) return 0.0;
    return scale_ == kernels::ModeScale::log
               ? kernels::log_mode_duration(lambda, dims_, eps, 0.0)
               : kernels::linear_mode_duration(lambda, dims_, eps, 0.0);
  }
  // g less or more its slack, for a term that lowers or raises a bound.
  static double lowered(double g) { return g - 8.0 * kSlackRelative * std::abs(g); }
  static double raised(double g) { return g + 8.0 * kSlackRelative * std::abs(g); }

  // A lower bound on (delta - T - g) over the row's pairs (on delta - T where the floors do not
  // follow the rate).
  std::vector<double> key_;
  std::vector<double> offset_sum_;  // max |a_l + a_r| over them
  std::vector<double> eps_lb_;      // the smallest eps of the row's pairs (+inf: none)
  bool follows_rate_ = false;
  std::vector<double> eps_buffer_, zeros_;  // bases' scratch
  kernels::ModeScale scale_ = kernels::ModeScale::linear;
  double dims_ = 1.0;
};

}  // namespace kingman::detail
