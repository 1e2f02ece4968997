// The merge-duration law of a pair under the binary / multinomial model
// (engine/src/model/discrete_duration_law.hpp) against closed forms. With x_d = x0_d e^{-2
// lambda_d delta} and a_d = x0_d (S_d - 1), f(delta) = e^{-lambda delta} prod_d (1 + a_d e^{-2
// lambda_d delta}) expands over subsets U of the columns into exponentials, so
//   integral over [delta0, inf) of f = sum_U prod_{d in U} a_d e^{-r_U delta0} / r_U,
//   r_U = lambda + 2 sum_{d in U} lambda_d,
// evaluated in long double (the terms alternate in sign when S_d < 1). With one rate for N
// columns of equal S the law reduces to a Beta integral (S = 0) or a sum of positive binomial
// terms (S > 1), which lets Z_C reach 1e-300 or 1e+340 at delta = 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/math/quadrature/gauss.hpp>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "../../engine/src/model/discrete_duration_law.hpp"
#include "kingman/error.hpp"
#include "kingman/kernels/rng.hpp"

namespace kingman {
namespace {

struct Columns {
  std::vector<double> overlaps, rates;
  double time_l = 0.0, time_r = 0.0, start = 0.0;  // t_l, t_r and T0
};

DiscretePair pair_of(const Columns& c) {
  return DiscretePair(c.overlaps, c.rates, c.time_l, c.time_r);
}

// The integral of f over [delta0, inf) (upper) or [0, delta0] (!upper) by the subset
// expansion (a few columns), in long double; the lower one sums -expm1(-r delta0) / r terms, so
// it keeps its relative accuracy for small delta0.
long double closed_form_integral(const Columns& c, double lambda, double delta0, bool upper) {
  const std::size_t d = c.overlaps.size();
  long double sum = 0.0L;
  for (unsigned subset = 0; subset < (1u << d); ++subset) {
    long double coefficient = 1.0L, rate = lambda;
    for (std::size_t j = 0; j < d; ++j) {
      if (!(subset & (1u << j))) continue;
      const long double x0 =
          std::exp(static_cast<long double>(c.rates[j]) * (2.0L * c.start - c.time_l - c.time_r));
      coefficient *= x0 * (static_cast<long double>(c.overlaps[j]) - 1.0L);
      rate += 2.0L * c.rates[j];
    }
    const long double x = -rate * static_cast<long double>(delta0);
    sum += coefficient * (upper ? std::exp(x) : -std::expm1(x)) / rate;
  }
  return sum;
}

// The integral of f over [0, delta] for the draw checks. Near 0 the expansion cancels (with
// S_d = 0 its terms are ~delta while the integral is ~delta^(1 + zero columns)), so there the
// product form is integrated by Boost's 20-point Gauss-Legendre rule in long double: f is a
// near-polynomial on such a short interval.
long double lower_reference(const Columns& c, double lambda, double delta) {
  long double rate_sum = lambda;
  for (double r : c.rates) rate_sum += 2.0L * r;
  if (delta * rate_sum > 0.5L) return closed_form_integral(c, lambda, delta, false);
  auto f = [&](long double s) {
    long double value = std::exp(-lambda * s);
    for (std::size_t j = 0; j < c.overlaps.size(); ++j) {
      const long double y = c.rates[j] * (2.0L * (c.start - s) - c.time_l - c.time_r);
      value *= -std::expm1(y) + std::exp(y) * c.overlaps[j];
    }
    return value;
  };
  return boost::math::quadrature::gauss<long double, 20>::integrate(
      f, 0.0L, static_cast<long double>(delta));
}

double closed_form_log_upper(const Columns& c, double lambda, double delta0) {
  return static_cast<double>(std::log(closed_form_integral(c, lambda, delta0, true)));
}

std::vector<Columns> closed_form_cases() {
  std::vector<Columns> cases;
  // One column: leaves (x0 = 1) and clusters at earlier times (x0 < 1).
  for (double s : {0.0, 0.4, 1.7, 20.0, 1e4})
    for (double rate : {0.1, 1.0, 7.0}) {
      cases.push_back({{s}, {rate}, 0.0, 0.0, 0.0});
      cases.push_back({{s}, {rate}, -0.3, -1.1, -1.5});
    }
  // Two and three columns, one rate and per-column rates.
  cases.push_back({{0.0, 2.0}, {1.0, 1.0}, 0.0, 0.0, 0.0});
  cases.push_back({{0.0, 0.0}, {0.5, 3.0}, 0.0, 0.0, 0.0});
  cases.push_back({{3.5, 0.2}, {2.0, 0.3}, -0.2, -0.05, -0.4});
  cases.push_back({{0.0, 4.0, 0.7}, {1.0, 2.5, 0.4}, 0.0, 0.0, 0.0});
  cases.push_back({{1.9, 1.3, 2.2}, {0.8, 0.8, 0.8}, -1.0, -0.2, -1.0});
  return cases;
}

std::string describe(const Columns& c, double lambda) {
  std::ostringstream text;
  text << "lambda " << lambda << " S/rate";
  for (std::size_t j = 0; j < c.overlaps.size(); ++j)
    text << " " << c.overlaps[j] << "/" << c.rates[j];
  text << " t " << c.time_l << "," << c.time_r << " T0 " << c.start;
  return text.str();
}

const double kLambdas[] = {0.3, 1.0, 6.0, 45.0};

TEST(DiscreteDurationLaw, NoSharedColumnIsExponential) {
  for (double lambda : kLambdas) {
    const DiscreteDurationLaw law(DiscretePair({}, {}, 0.0, -0.5), lambda, -0.7);
    EXPECT_DOUBLE_EQ(law.log_mass(), -std::log(lambda));
    for (double delta0 : {0.0, 0.2, 3.0, 400.0})
      EXPECT_DOUBLE_EQ(law.log_upper(delta0), -lambda * delta0 - std::log(lambda));
    for (double u : {1e-12, 0.3, 0.5, 0.9, 1 - 1e-12})
      EXPECT_DOUBLE_EQ(law.draw(u), -std::log1p(-u) / lambda);
    EXPECT_EQ(law.evaluations(), 0u);
  }
  // A column with S = 1 has Z^d = 1 at every time: the same closed form.
  const DiscreteDurationLaw law(DiscretePair({1.0}, {2.0}, 0.0, 0.0), 3.0, 0.0);
  EXPECT_DOUBLE_EQ(law.log_mass(), -std::log(3.0));
}

TEST(DiscreteDurationLaw, MassAndUpperMassMatchClosedForms) {
  double worst_mass = 0.0, worst_upper = 0.0;
  std::size_t most_evaluations = 0;
  for (const Columns& c : closed_form_cases()) {
    for (double lambda : kLambdas) {
      SCOPED_TRACE(describe(c, lambda));
      const DiscreteDurationLaw law(pair_of(c), lambda, c.start);
      most_evaluations = std::max(most_evaluations, law.evaluations());
      const double mass_error = std::abs(law.log_mass() - closed_form_log_upper(c, lambda, 0.0));
      worst_mass = std::max(worst_mass, mass_error);
      EXPECT_LE(mass_error, 1e-12);
      // Upper masses from near 0 to far past the integrated range (recomputed there).
      for (double scaled : {1e-9, 1e-3, 0.1, 1.0, 4.0, 15.0, 60.0, 300.0}) {
        const double delta0 = scaled / lambda;
        const double error =
            std::abs(law.log_upper(delta0) - closed_form_log_upper(c, lambda, delta0));
        worst_upper = std::max(worst_upper, error);
        EXPECT_LE(error, 1e-11) << "delta0 " << delta0;
      }
    }
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.3g / %.3g", worst_mass, worst_upper);
  RecordProperty("worst_log_error_mass_upper", text);
  RecordProperty("most_evaluations", static_cast<int>(most_evaluations));
}

// N columns with one rate and one overlap S: with y = e^{-2 lambda_d delta} the mass is
// (1 / 2 lambda_d) * integral over [0, 1] of y^{c - 1} (1 + a y)^N dy, c = lambda / (2 lambda_d),
// a = S - 1 (leaves, x0 = 1): a Beta function for S = 0, positive binomial terms for S > 1.
TEST(DiscreteDurationLaw, AstronomicalLikelihoodsStayFinite) {
  for (double lambda : {1.0, 45.0}) {
    for (std::size_t n_columns : {50u, 200u, 1000u}) {
      const double rate = 0.7, c = lambda / (2 * rate);
      {
        // S = 0: Z = (1 - y)^N, tiny near delta = 0 (Z(0) = 0).
        const DiscreteDurationLaw law(DiscretePair(std::vector<double>(n_columns, 0.0),
                                                   std::vector<double>(n_columns, rate), 0.0, 0.0),
                                      lambda, 0.0);
        const double n = static_cast<double>(n_columns);
        const double expected =
            std::lgamma(c) + std::lgamma(n + 1) - std::lgamma(c + n + 1) - std::log(2 * rate);
        EXPECT_NEAR(law.log_mass(), expected, 1e-12 * std::max(1.0, std::abs(expected)))
            << "S = 0, N = " << n_columns << ", lambda " << lambda;
      }
      {
        // S = 40: Z(0) = 40^N (1e+1602 for N = 1000).
        const double s = 40.0, a = s - 1.0;
        const DiscreteDurationLaw law(DiscretePair(std::vector<double>(n_columns, s),
                                                   std::vector<double>(n_columns, rate), 0.0, 0.0),
                                      lambda, 0.0);
        // sum_j C(N, j) a^j / (2 lambda_d (c + j)), in log space.
        double maximum = -INFINITY;
        std::vector<double> terms;
        const double n = static_cast<double>(n_columns);
        for (std::size_t j = 0; j <= n_columns; ++j) {
          const double k = static_cast<double>(j);
          terms.push_back(std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1) +
                          k * std::log(a) - std::log(2 * rate * (c + k)));
          maximum = std::max(maximum, terms.back());
        }
        double sum = 0.0;
        for (double t : terms) sum += std::exp(t - maximum);
        const double expected = maximum + std::log(sum);
        EXPECT_NEAR(law.log_mass(), expected, 1e-12 * std::max(1.0, std::abs(expected)))
            << "S = 40, N = " << n_columns << ", lambda " << lambda;
        const double u = 0.25;
        const double delta = law.draw(u);
        EXPECT_TRUE(std::isfinite(delta) && delta > 0.0);
        EXPECT_NEAR(std::exp(law.log_upper(delta) - law.log_mass()), 1 - u, 1e-10);
      }
    }
  }
}

// draw(u) inverts the distribution function: F(draw(u)) / mass = u, by the closed form. Below
// the median the relative error of u is checked (the left tail keeps its accuracy, also where
// f(0) = 0); above it, the absolute error of 1 - u (the upper tail's panels are accurate
// relative to the whole mass).
TEST(DiscreteDurationLaw, DrawInvertsTheDistributionFunction) {
  const double us[] = {1e-12, 1e-9, 1e-6,  1e-3,     0.02,     0.2,      0.5,
                       0.6,   0.9,  0.999, 1 - 1e-6, 1 - 1e-9, 1 - 1e-12};
  double worst_relative = 0.0, worst_absolute = 0.0, worst_right = 0.0;
  for (const Columns& c : closed_form_cases()) {
    for (double lambda : kLambdas) {
      SCOPED_TRACE(describe(c, lambda));
      const DiscreteDurationLaw law(pair_of(c), lambda, c.start);
      const long double mass = closed_form_integral(c, lambda, 0.0, true);
      double previous = 0.0;
      for (double u : us) {
        const double delta = law.draw(u);
        ASSERT_TRUE(std::isfinite(delta) && delta > 0.0) << "u " << u;
        EXPECT_GT(delta, previous) << "u " << u;
        previous = delta;
        const double upper =
            static_cast<double>(closed_form_integral(c, lambda, delta, true) / mass);
        const double lower = static_cast<double>(lower_reference(c, lambda, delta) / mass);
        if (u <= 0.5) {
          const double relative = std::abs(lower / u - 1.0);
          worst_relative = std::max(worst_relative, relative);
          EXPECT_LE(relative, 1e-9) << "u " << u;
        }
        if (u > 0.5) worst_right = std::max(worst_right, std::abs(upper / (1.0 - u) - 1.0));
        const double absolute = std::abs(upper - (1.0 - u));
        worst_absolute = std::max(worst_absolute, absolute);
        EXPECT_LE(absolute, 1e-12) << "u " << u;
      }
    }
  }
  char text[96];
  std::snprintf(text, sizeof text, "%.3g / %.3g / %.3g", worst_relative, worst_absolute,
                worst_right);
  RecordProperty("worst_relative_left_absolute_relative_right", text);
}

// Kolmogorov-Smirnov: draws with uniforms from the project's streams against the closed-form
// distribution function (D below the 0.1% critical value 1.95 / sqrt(N)).
TEST(DiscreteDurationLaw, DrawsPassKolmogorovSmirnov) {
  const Columns cases[] = {
      {{0.0}, {1.0}, 0.0, 0.0, 0.0},
      {{3.5, 0.2}, {2.0, 0.3}, -0.2, -0.05, -0.4},
      {{0.0, 4.0, 0.7}, {1.0, 2.5, 0.4}, 0.0, 0.0, 0.0},
  };
  constexpr std::size_t kDraws = 20000;
  for (std::size_t k = 0; k < std::size(cases); ++k) {
    const Columns& c = cases[k];
    const double lambda = 3.0;
    const DiscreteDurationLaw law(pair_of(c), lambda, c.start);
    const long double mass = closed_form_integral(c, lambda, 0.0, true);
    std::vector<double> cdf;
    kernels::RandomStream stream(2024, k);
    for (std::size_t i = 0; i < kDraws; ++i) {
      const double delta = law.draw(stream.uniform());
      cdf.push_back(static_cast<double>(closed_form_integral(c, lambda, delta, false) / mass));
    }
    std::sort(cdf.begin(), cdf.end());
    double distance = 0.0;
    for (std::size_t i = 0; i < kDraws; ++i) {
      distance = std::max({distance, cdf[i] - static_cast<double>(i) / kDraws,
                           static_cast<double>(i + 1) / kDraws - cdf[i]});
    }
    EXPECT_LT(distance, 1.95 / std::sqrt(static_cast<double>(kDraws))) << describe(c, lambda);
  }
}

// The batched density (vectorized exps and logs, a column at a time) against log_density
// (libm per column), with one rate and per-column rates, at delta = 0 where a disagreeing
// column makes it -inf (the batch's scalar way), and where the exponentials underflow.
TEST(DiscreteDurationLaw, BatchedDensityMatchesTheScalarOne) {
  kernels::RandomStream stream(31, 0, 0);
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t columns = 1 + stream.below(40);
    Columns c;
    for (std::size_t k = 0; k < columns; ++k) {
      c.overlaps.push_back(stream.below(5) == 0 ? 0.0 : std::exp(4.0 * (stream.uniform() - 0.3)));
      c.rates.push_back(trial % 2 ? 0.7 : std::exp(2.0 * (stream.uniform() - 0.5)));
    }
    c.time_l = -stream.uniform();
    c.time_r = trial % 3 == 0 ? 0.0 : -stream.uniform();
    c.start = std::min(c.time_l, c.time_r) - (trial % 4 == 0 ? 0.0 : stream.uniform());
    const DiscreteDurationLaw law(pair_of(c), 1.0 + 20.0 * stream.uniform(), c.start);
    std::vector<double> deltas = {0.0, 1e-12, 1e-6, 1e-3, 0.05, 0.5, 3.0, 40.0, 400.0};
    for (int k = 0; k < 23; ++k) deltas.push_back(2.0 * stream.uniform());
    std::vector<double> batch(deltas.size());
    law.log_density_batch(deltas.data(), batch.data(), deltas.size());
    for (std::size_t i = 0; i < deltas.size(); ++i) {
      const double scalar = law.log_density(deltas[i]);
      if (std::isinf(scalar)) {
        EXPECT_EQ(batch[i], scalar) << "trial " << trial << ", delta " << deltas[i];
      } else {
        // A few ulps per column and for the rate term.
        EXPECT_NEAR(batch[i], scalar,
                    1e-15 * (static_cast<double>(columns) + 1.0) * std::max(1.0, std::abs(scalar)))
            << "trial " << trial << ", delta " << deltas[i];
      }
    }
  }
  // Two disagreeing leaves: density 0 at delta = 0, in a batch with positive values.
  const DiscreteDurationLaw leaves(pair_of({{0.0, 2.5}, {1.0, 0.5}, 0.0, 0.0, 0.0}), 2.0, 0.0);
  const double deltas[3] = {0.3, 0.0, 1.0};
  double batch[3];
  leaves.log_density_batch(deltas, batch, 3);
  EXPECT_EQ(batch[1], -INFINITY);
  EXPECT_NEAR(batch[0], leaves.log_density(0.3), 1e-14);
  EXPECT_NEAR(batch[2], leaves.log_density(1.0), 1e-14);
}

// log_lower_share_upper_bound bounds the share of the mass below delta0 from above, at the
// law's own quantiles (shares 1e-12 … 0.99), for per-column and common rates, rate 1 (the
// race's) and larger; and it is small where the share is: for two leaves that disagree on 20
// of 30 columns, the share below 0.01 is bounded below 1e-10.
TEST(DiscreteDurationLaw, LowerShareUpperBoundHolds) {
  kernels::RandomStream stream(37, 0, 0);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t columns = 1 + stream.below(30);
    Columns c;
    for (std::size_t k = 0; k < columns; ++k) {
      c.overlaps.push_back(stream.below(4) == 0 ? 0.0 : std::exp(3.0 * (stream.uniform() - 0.4)));
      c.rates.push_back(trial % 2 ? 0.8 : std::exp(2.0 * (stream.uniform() - 0.5)));
    }
    c.time_l = -stream.uniform();
    c.time_r = -stream.uniform();
    c.start = std::min(c.time_l, c.time_r);
    const double rate = trial % 3 == 0 ? 1.0 : std::exp(4.0 * stream.uniform());
    const DiscreteDurationLaw law(pair_of(c), rate, c.start);
    for (const double share : {1e-12, 1e-6, 1e-2, 0.3, 0.99}) {
      const double delta0 = law.draw(share);
      EXPECT_GE(log_lower_share_upper_bound(pair_of(c), rate, c.start, delta0),
                std::log(share) - 1e-9)
          << describe(c, rate) << " share " << share;
    }
  }
  Columns far;
  for (std::size_t k = 0; k < 30; ++k) {
    far.overlaps.push_back(k < 20 ? 0.0 : 2.0);
    far.rates.push_back(0.5 + 0.05 * static_cast<double>(k));
  }
  EXPECT_LT(log_lower_share_upper_bound(pair_of(far), 1.0, 0.0, 0.01), std::log(1e-10));
}

TEST(DiscreteDurationLaw, DensityAndArguments) {
  const Columns c{{0.0, 2.5}, {1.0, 0.5}, 0.0, 0.0, 0.0};
  DiscreteDurationLaw law(pair_of(c), 2.0, 0.0);
  // Two disagreeing leaves cannot merge at delta = 0.
  EXPECT_EQ(law.log_density(0.0), -INFINITY);
  const double delta = 0.3;
  const double expected =
      -2.0 * delta + std::log(-std::expm1(-2.0 * delta)) + std::log(1.0 + std::exp(-delta) * 1.5);
  EXPECT_NEAR(law.log_density(delta), expected, 1e-14);
  EXPECT_THROW(law.draw(0.0), OptionError);
  EXPECT_THROW(law.draw(1.0), OptionError);
  EXPECT_THROW(law.assign(pair_of(c), 0.0, 0.0), OptionError);
  EXPECT_THROW(law.assign(pair_of(c), 1.0, 0.1), OptionError);  // later than the leaves
  // assign reuses the object for another pair and start time.
  const Columns other{{3.5, 0.2}, {2.0, 0.3}, -0.2, -0.05, -0.4};
  law.assign(pair_of(other), 6.0, other.start);
  EXPECT_NEAR(law.log_mass(), closed_form_log_upper(other, 6.0, 0.0), 1e-12);
}

}  // namespace
}  // namespace kingman
