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
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace kingman::detail {

class RowDurationBounds {
 public:
  static constexpr double kSlackRelative = 1e-12;

  explicit RowDurationBounds(std::size_t slots)
      : key_(slots, std::numeric_limits<double>::infinity()), offset_sum_(slots, 0.0) {}

  // Row `slot` holds no pair yet (a new cluster's, or a slot's first row).
  void clear(std::size_t slot) {
    key_[slot] = std::numeric_limits<double>::infinity();
    offset_sum_[slot] = 0.0;
  }

  // A pair of row `slot` whose computed duration at current time `time` is `duration`; at most
  // `offset_sum` = max |a_l + a_r| over the pairs added since clear (an upper bound will do).
  void add(std::size_t slot, double duration, double offset_sum, double time) {
    const double slack = kSlackRelative * (4.0 * std::abs(duration) + 2.0 * std::abs(offset_sum) +
                                           4.0 * std::abs(time));
    key_[slot] = std::min(key_[slot], (duration - time) - slack);
    offset_sum_[slot] = std::max(offset_sum_[slot], std::abs(offset_sum));
  }

  // The part of floor_part that depends on the row alone: floor_part is base + time less a
  // slack term common to all rows, so rows with base at most some threshold are found by a
  // search over a row-ordered copy of the bases (greedy_rescan.cpp) and then tested exactly.
  double base(std::size_t slot) const {
    const double key = key_[slot];
    if (key == std::numeric_limits<double>::infinity()) return key;  // no pair (not inf - inf)
    return key - kSlackRelative * (2.0 * offset_sum_[slot] + std::abs(key));
  }

  // The part of row `slot`'s floor that does not depend on the step's best duration (below).
  double floor_part(std::size_t slot, double time) const {
    const double key = key_[slot];
    if (key == std::numeric_limits<double>::infinity()) return key;  // no pair
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
  std::vector<double> key_;         // a lower bound on (delta - T) over the row's pairs
  std::vector<double> offset_sum_;  // max |a_l + a_r| over them
};

}  // namespace kingman::detail
