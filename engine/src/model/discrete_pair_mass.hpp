#pragma once
// The mass of one pair's merge-duration law under the binary / multinomial model when its shared
// columns have one mutation rate lambda_c (MODEL.md sections 5 and 7):
//     G_C = integral_0^inf e^{-lambda delta} Z_C(T0 - delta) d delta,
// PostPost's pair score, exactly and in closed form up to rounding. With v = e^{-2 lambda_c delta}
// each column's factor is Z^d = 1 - A_d x0 v (x0 = e^{lambda_c (2 T0 - t_l - t_r)}, A_d =
// 1 - S_d), so Z_C = P(v) is a polynomial of degree D, the number of columns with S_d != 1, and
//     G_C = (1 / 2 lambda_c) integral_0^1 v^{beta - 1} P(v) dv,   beta = lambda / (2 lambda_c),
// which an N-point Gauss-Jacobi rule for the weight v^{beta - 1} integrates exactly once
// 2N - 1 >= D. Its weights and P's values at its nodes are positive, so the sum has no
// cancellation; the factors are evaluated as (1 - x0 v) + x0 v S_d, both terms >= 0, with
// 1 - x0 v = (1 - x0) + x0 (1 - v) from the nodes' complements, so that factors close to 0 keep
// their relative precision. The rule depends only on beta, so one rule serves every pair of an
// SMC step: O(N D) work per pair where the adaptive quadrature of DiscreteDurationLaw takes
// hundreds of evaluations of Z_C. Agreement with that quadrature is tested to 1e-12.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kingman/kernels/gauss_jacobi.hpp"
#include "kingman/model/discrete_messages.hpp"

namespace kingman {

class DiscretePairMasses {
 public:
  // Largest number of varying columns a rule is built for (N = 257 nodes); pairs with more take
  // the adaptive quadrature.
  static constexpr std::size_t kMaxColumns = 512;

  // Whether the rule for these rates is built: its exponent beta - 1 = lambda / 2 lambda_c - 1
  // within [-1 + 2^-20, 2^50], where the rules are tested (tests/kernels/gauss_jacobi_test.cpp).
  // Callers take the adaptive quadrature elsewhere.
  static bool supports(double rate, double mutation_rate);

  // For total rate lambda > 0, the data's one mutation rate lambda_c > 0 and pairs of at most
  // `columns` shared columns (the data's column count). Throws OptionError unless supports().
  DiscretePairMasses(double rate, double mutation_rate, std::size_t columns);

  // Whether log_mass is exact for this pair: its columns' rate is lambda_c and it has at most
  // min(columns, kMaxColumns) varying columns.
  bool handles(const DiscretePair& pair) const;

  // log G_C for a pair that handles() accepts, from start time T0 <= pair.latest_time().
  double log_mass(const DiscretePair& pair, double start_time) const;

  // The same with its logarithm left to the caller where that can be: returns true and sets
  // `value` to a sum S (a finite number above 1e-280) with log G_C = log S + log_scale(), or
  // returns false and sets `value` to log G_C itself (where the sum had to be formed in logs).
  // A caller with many pairs takes their logs at once (kernels::log_array): a libm log per pair
  // was 11 % of a binary PostPost run.
  bool mass_sum(const DiscretePair& pair, double start_time, double& value) const;
  double log_scale() const { return log_scale_; }

  // Quantiles below this are left to DiscreteDurationLaw::draw: the lower mass u G_C is found
  // here as G_C - upper, which leaves it only ~1e-13 / u of relative precision.
  static constexpr double kSmallestQuantile = 0x1p-10;

  // The duration delta whose lower mass is u G_C, for u in [kSmallestQuantile, 1) and
  // log_mass = log G_C from T0 (NaN for u below that range): the root of
  // log upper(delta) = log((1 - u) G_C), where the upper mass upper(delta) = e^{-lambda delta}
  // G_C(T0 - delta) (the same pair's mass from the later start) is a Gauss-Jacobi sum and
  // decreases with slope -f(delta). Newton steps, safeguarded by bisection of the bracket that
  // every evaluation shrinks, to 4 ulp of delta; typically 4-6 evaluations.
  double quantile(const DiscretePair& pair, double start_time, double log_mass, double u) const;

 private:
  double rate_, mutation_rate_;
  // log(1 / 2 lambda_c), every mass's constant factor: once here rather than a second log per
  // pair in log_mass.
  double log_scale_;
  std::size_t max_varying_;
  // Distinct for every constructed rule set (copies share it, and their rules): log_mass's
  // per-thread node parts are kept for one of them at a time. The address would not do: an
  // SMC step's masses are built in the same place as the last step's.
  std::uint64_t identity_;
  kernels::GaussJacobiRule rule_;     // in u = 1 - v: weight (1 - u)^{beta - 1}
  std::vector<double> weight_lanes_;  // the weights, then zeros to a multiple of 8
  std::vector<double> log_weight_;
};

}  // namespace kingman
