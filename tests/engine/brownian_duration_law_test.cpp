// The merge-duration law of a pair under the Brownian model with per-dimension messages
// (engine/src/model/brownian_duration_law.hpp). With one offset r for every shared dimension
// the law is the truncated GIG of the complete-data case, whose mass the GIG kernels give:
//   G = 1/2 (2 pi)^{-k/2} e^{lambda r / 2} I(r),  I(r) = int_r^inf s^{-k/2} e^{-(E/s + lambda s)/2}
//   ds.
// With several offsets there is no closed form: the reference is a long-double Simpson rule in
// log delta on a grid far finer than the density's features.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "../../engine/src/model/brownian_duration_law.hpp"
#include "kingman/error.hpp"
#include "kingman/kernels/gig.hpp"
#include "kingman/kernels/rng.hpp"

namespace kingman {
namespace {

SharedDimensions dimensions(const std::vector<double>& offsets, const std::vector<double>& deltas) {
  SharedDimensions shared;
  for (std::size_t j = 0; j < offsets.size(); ++j) {
    shared.offset.push_back(offsets[j]);
    shared.squared_delta.push_back(deltas[j] * deltas[j]);
    shared.log_lambda.push_back(0.0);
  }
  return shared;
}

// log of the integral of f over [delta0, inf) by Simpson's rule in u = log delta (long double).
long double reference_log_upper(const SharedDimensions& shared, double lambda, double delta0) {
  auto log_f = [&](long double delta) {
    long double value = -lambda * delta;
    for (std::size_t j = 0; j < shared.offset.size(); ++j) {
      const long double s = shared.offset[j] + 2.0L * delta;
      value += -0.5L * std::log(2.0L * std::numbers::pi_v<long double> * s) -
               shared.squared_delta[j] / (2.0L * s);
    }
    return value;
  };
  const long double u0 = delta0 > 0.0 ? std::log(static_cast<long double>(delta0)) : -60.0L;
  const long double u1 = std::log(800.0L / lambda);
  const int intervals = 100000;
  const long double h = (u1 - u0) / intervals;
  // Shifted by the largest log integrand so nothing underflows.
  std::vector<long double> values(intervals + 1);
  long double shift = -INFINITY;
  for (int i = 0; i <= intervals; ++i) {
    const long double u = u0 + h * i;
    values[i] = log_f(std::exp(u)) + u;  // d delta = delta du
    shift = std::max(shift, values[i]);
  }
  long double sum = 0.0L;
  for (int i = 0; i <= intervals; ++i) {
    const long double w = (i == 0 || i == intervals) ? 1.0L : (i % 2 ? 4.0L : 2.0L);
    sum += w * std::exp(values[i] - shift);
  }
  return shift + std::log(sum * h / 3.0L);
}

double closed_form_log_mass(double k, double energy, double r, double lambda) {
  const double p = 1.0 - 0.5 * k;
  const double head = -std::log(2.0) - 0.5 * k * std::log(2.0 * std::numbers::pi);
  if (r == 0.0) return head + kernels::log_gig_normalizer(p, energy, lambda);
  return head + p * std::log(r) - energy / (2.0 * r) +
         kernels::log_gig_upper_integral_scaled(p, energy, lambda, r);
}

TEST(BrownianDurationLaw, OneOffsetIsTheTruncatedGig) {
  kernels::RandomStream stream(7, 0, 0);
  double worst = 0.0;
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t k = 1 + stream.below(40);
    const double r = trial % 4 == 0 ? 0.0 : std::exp(-8.0 + 10.0 * stream.uniform());
    const double lambda = std::exp(-3.0 + 10.0 * stream.uniform());
    const double spread = std::exp(-5.0 + 7.0 * stream.uniform());
    std::vector<double> offsets(k, r), deltas(k);
    for (double& d : deltas) d = spread * (stream.uniform() - 0.5);
    if (r == 0.0 && k >= 2) deltas[0] += spread;  // integrable: the clusters differ somewhere
    const SharedDimensions shared = dimensions(offsets, deltas);
    double energy = 0.0;
    for (const double e : shared.squared_delta) energy += e;
    if (r == 0.0 && energy == 0.0 && k >= 2) continue;
    const BrownianDurationLaw law(shared, lambda, -1.0);
    const double expected = closed_form_log_mass(static_cast<double>(k), energy, r, lambda);
    const double error = std::abs(law.log_mass() - expected);
    // The closed form that the SMC uses for such pairs (the same kernels as `expected`).
    EXPECT_NEAR(single_offset_log_mass(shared, lambda), expected,
                1e-13 * std::max(1.0, std::abs(expected)));
    worst = std::max(worst, error);
    EXPECT_LT(error, 1e-11 * std::max(1.0, std::abs(expected)))
        << "k " << k << " r " << r << " lambda " << lambda << " E " << energy;
  }
  RecordProperty("worst_log_error", std::to_string(worst));
}

TEST(BrownianDurationLaw, SeveralOffsetsMatchFineQuadrature) {
  kernels::RandomStream stream(11, 0, 0);
  for (int trial = 0; trial < 16; ++trial) {
    const std::size_t k = 2 + stream.below(12);
    std::vector<double> offsets(k), deltas(k);
    for (std::size_t j = 0; j < k; ++j) {
      offsets[j] = j % 3 == 0 ? 0.05 : std::exp(-4.0 + 5.0 * stream.uniform());
      deltas[j] = 2.0 * (stream.uniform() - 0.5);
    }
    const double lambda = std::exp(-2.0 + 6.0 * stream.uniform());
    const SharedDimensions shared = dimensions(offsets, deltas);
    EXPECT_TRUE(std::isnan(single_offset_log_mass(shared, lambda)));
    const BrownianDurationLaw law(shared, lambda, 0.0);
    const long double expected = reference_log_upper(shared, lambda, 0.0);
    EXPECT_NEAR(law.log_mass(), static_cast<double>(expected), 1e-10) << "trial " << trial;
    // Upper masses and draws: the upper mass beyond the u-quantile is (1 - u) of the mass, to
    // the ~1e-13 relative accuracy of log_upper and log_mass themselves.
    for (const double u : {1e-6, 0.1, 0.5, 0.9, 1.0 - 1e-9}) {
      const double delta = law.draw(u);
      ASSERT_TRUE(delta >= 0.0 && std::isfinite(delta)) << u;
      const double upper_share = std::exp(law.log_upper(delta) - law.log_mass());
      EXPECT_NEAR(upper_share, 1.0 - u, 1e-12) << "trial " << trial << " u " << u;
    }
    const double delta = law.draw(0.7);
    EXPECT_NEAR(law.log_upper(delta),
                static_cast<double>(reference_log_upper(shared, lambda, delta)), 1e-9);
  }
}

// resolve_upper refines a law's panels for the upper masses out to delta0: those read off the
// refined panels agree with the fresh integrations the unrefined law makes for them, and with
// the long-double reference; the mass stays the mass.
TEST(BrownianDurationLaw, ResolvedUpperMassesMatchFreshIntegrals) {
  kernels::RandomStream stream(17, 0, 0);
  int refined = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const std::size_t k = 2 + stream.below(10);
    std::vector<double> offsets(k), deltas(k);
    for (std::size_t j = 0; j < k; ++j) {
      offsets[j] = std::exp(-4.0 + 5.0 * stream.uniform());
      deltas[j] = 2.0 * (stream.uniform() - 0.5);
    }
    const double lambda = std::exp(-1.0 + 6.0 * stream.uniform());
    const SharedDimensions shared = dimensions(offsets, deltas);
    const BrownianDurationLaw law(shared, lambda, 0.0);
    BrownianDurationLaw resolved = law;
    const double far = law.draw(1.0 - 1e-6);  // an upper share of 1e-6
    resolved.resolve_upper(far);
    refined += resolved.evaluations() > law.evaluations();
    EXPECT_NEAR(resolved.log_mass(), law.log_mass(), 1e-13 * std::abs(law.log_mass()));
    for (const double u : {0.5, 0.99, 0.9999, 1.0 - 1e-6}) {
      const double delta = law.draw(u);
      EXPECT_NEAR(resolved.log_upper(delta), law.log_upper(delta),
                  1e-12 * std::max(1.0, std::abs(law.log_upper(delta))))
          << "trial " << trial << ", u " << u;
    }
    EXPECT_NEAR(resolved.log_upper(far),
                static_cast<double>(reference_log_upper(shared, lambda, far)), 1e-9)
        << "trial " << trial;
  }
  EXPECT_GE(refined, 6) << "most laws need refining for an upper share of 1e-6";
}

TEST(BrownianDurationLaw, NarrowPeakFarBelowTheRateScale) {
  // Zero leaf variance and 60 dimensions far apart: the mass sits in a peak of relative width
  // ~1/sqrt(60) near delta = E / (2k), far below 1 / lambda.
  std::vector<double> offsets(60, 0.0), deltas(60, 1e-3);
  offsets[0] = 1e-9;
  const SharedDimensions shared = dimensions(offsets, deltas);
  const BrownianDurationLaw law(shared, 0.5, 0.0);
  EXPECT_NEAR(law.log_mass(), static_cast<double>(reference_log_upper(shared, 0.5, 0.0)), 1e-9);
}

// log_mass_upper_bound bounds the mass from above (to rounding) for one offset and several,
// close and far pairs, small and large rates; with one offset it loses only the theta split
// of the rate, and far pairs' bounds stay far below a typical pair's mass (PostPost skips
// them by it).
TEST(BrownianDurationLaw, MassUpperBoundHolds) {
  kernels::RandomStream stream(5, 0, 0);
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t k = 1 + stream.below(12);
    const bool one_offset = trial % 4 == 0;
    const double common = std::exp(-5.0 + 6.0 * stream.uniform());
    const double spread = std::exp(-3.0 + 6.0 * stream.uniform());  // of the differences
    std::vector<double> offsets(k), deltas(k);
    for (std::size_t j = 0; j < k; ++j) {
      offsets[j] = one_offset ? common : std::exp(-5.0 + 6.0 * stream.uniform());
      deltas[j] = spread * 2.0 * (stream.uniform() - 0.5);
    }
    const double lambda = std::exp(-1.0 + 10.0 * stream.uniform());
    const SharedDimensions shared = dimensions(offsets, deltas);
    const double bound = log_mass_upper_bound(shared, lambda);
    ASSERT_TRUE(std::isfinite(bound)) << "trial " << trial;
    const double exact = one_offset ? single_offset_log_mass(shared, lambda)
                                    : BrownianDurationLaw(shared, lambda, 0.0).log_mass();
    EXPECT_GE(bound, exact - 1e-12 * std::max(1.0, std::abs(exact))) << "trial " << trial;
  }
  // One offset, 10 dimensions far apart (E / (2 r) = 500): the bound sits above the mass by the
  // theta split's few nats plus a tenth of the exponent, not more.
  const SharedDimensions far =
      dimensions(std::vector<double>(10, 0.1), std::vector<double>(10, std::sqrt(10.0)));
  const double exact = single_offset_log_mass(far, 50.0);
  const double bound = log_mass_upper_bound(far, 50.0);
  EXPECT_GE(bound, exact);
  EXPECT_LT(bound, exact + 0.1 * std::abs(exact) + 5.0);
  // Zero offsets cannot be bounded this way; no shared dimension is exact.
  EXPECT_EQ(log_mass_upper_bound(dimensions({0.0, 0.3}, {1.0, 1.0}), 2.0),
            std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(log_mass_upper_bound(SharedDimensions{}, 3.0), -std::log(3.0));
}

// log_lower_share_upper_bound bounds the share of the mass below delta0 from above: at the
// law's own quantiles (shares from 1e-12 to 0.99), for one offset and several, small and large
// rates; and it is small where the share is small (the race skips clocks by it).
TEST(BrownianDurationLaw, LowerShareUpperBoundHolds) {
  kernels::RandomStream stream(8, 0, 0);
  double worst_useful = -std::numeric_limits<double>::infinity();
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t k = 1 + stream.below(12);
    const bool one_offset = trial % 4 == 0;
    const double common = std::exp(-5.0 + 6.0 * stream.uniform());
    const double spread = std::exp(-3.0 + 6.0 * stream.uniform());
    std::vector<double> offsets(k), deltas(k);
    double energy = 0.0, smallest = INFINITY, largest = 0.0;
    for (std::size_t j = 0; j < k; ++j) {
      offsets[j] = one_offset ? common * 1.0000001 : std::exp(-5.0 + 6.0 * stream.uniform());
      deltas[j] = spread * 2.0 * (stream.uniform() - 0.5);
      energy += deltas[j] * deltas[j];
      smallest = std::min(smallest, offsets[j]);
      largest = std::max(largest, offsets[j]);
    }
    if (one_offset) offsets[0] = common;  // two offsets, nearly equal: a law is built
    const double lambda = trial % 3 == 0 ? 1.0 : std::exp(-1.0 + 8.0 * stream.uniform());
    const BrownianDurationLaw law(dimensions(offsets, deltas), lambda, 0.0);
    for (const double share : {1e-12, 1e-6, 1e-2, 0.3, 0.99}) {
      const double delta0 = law.draw(share);
      const double bound = log_lower_share_upper_bound(
          static_cast<double>(k), energy, std::min(smallest, common), largest, lambda, delta0);
      EXPECT_GE(bound, std::log(share) - 1e-9)
          << "trial " << trial << ", share " << share << ", delta0 " << delta0;
      if (share == 1e-12 && one_offset)
        worst_useful = std::max(worst_useful, bound - std::log(share));
    }
  }
  // Where the offsets nearly coincide, at a share of 1e-12 the bound stays within e^20 of it
  // (below 1e-3): it tells the clocks that cannot ring in time. (Offsets that differ by a factor
  // rho lose up to (K/2) log rho and a factor rho of the exponent E / 2u: hundreds of nats
  // where rho is in the hundreds.)
  EXPECT_LT(worst_useful, 20.0);
  EXPECT_EQ(log_lower_share_upper_bound(2.0, 1.0, 0.0, 1.0, 1.0, 0.5),
            std::numeric_limits<double>::infinity());
}

TEST(BrownianDurationLaw, NoSharedDimensionIsExponential) {
  const BrownianDurationLaw law(SharedDimensions{}, 3.0, 0.0);
  EXPECT_DOUBLE_EQ(law.log_mass(), -std::log(3.0));
  EXPECT_DOUBLE_EQ(single_offset_log_mass(SharedDimensions{}, 3.0), -std::log(3.0));
  EXPECT_DOUBLE_EQ(law.draw(0.5), std::log(2.0) / 3.0);
}

TEST(BrownianDurationLaw, RefusesNonIntegrableAndBadInput) {
  EXPECT_THROW(BrownianDurationLaw(dimensions({0.0, 0.0}, {0.0, 0.0}), 1.0, 0.0), NumericalError);
  EXPECT_THROW(single_offset_log_mass(dimensions({0.0, 0.0}, {0.0, 0.0}), 1.0), NumericalError);
  // One coinciding dimension of zero variance: (2 delta)^(-1/2), integrable.
  const SharedDimensions one = dimensions({0.0}, {0.0});
  const BrownianDurationLaw law(one, 1.0, 0.0);
  EXPECT_NEAR(law.log_mass(), closed_form_log_mass(1.0, 0.0, 0.0, 1.0), 1e-10);
  EXPECT_THROW(BrownianDurationLaw(dimensions({-1.0}, {1.0}), 1.0, 0.0), OptionError);
  EXPECT_THROW(BrownianDurationLaw(dimensions({1.0}, {1.0}), 0.0, 0.0), OptionError);
  EXPECT_THROW(BrownianDurationLaw(dimensions({NAN}, {1.0}), 1.0, 0.0), OptionError);
}

}  // namespace
}  // namespace kingman
