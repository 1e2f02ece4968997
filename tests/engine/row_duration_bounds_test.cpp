// The row bounds of the rescanning greedies (engine/src/inference/row_duration_bounds.hpp):
// a pair's computed duration minus the current time never falls below what a bound made at an
// earlier step (higher rate, later time) allows, in either scale, over distances and offsets of
// many sizes, with plain bounds and with floors that follow the rate (which are tight for a row
// of one pair, and hold as pairs of any distance join); a row's bound is the lowest of its
// pairs'; bases are each slot's base; and floor_part orders rows as floor does.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "../../engine/src/inference/row_duration_bounds.hpp"
#include "kingman/kernels/mode_durations.hpp"

namespace kingman::detail {
namespace {

double duration(kernels::ModeScale scale, double lambda, double dims, double eps, double offset) {
  return scale == kernels::ModeScale::linear
             ? kernels::linear_mode_duration(lambda, dims, eps, offset)
             : kernels::log_mode_duration(lambda, dims, eps, offset);
}

constexpr double kNoEps = std::numeric_limits<double>::infinity();

double rate(std::size_t m) {
  return 0.5 * static_cast<double>(m * (m - 1));
}

// Plain bounds (eps +inf) and floors that follow the rate: a pair's later durations never fall
// below its row's floor; where they follow the rate, the floor of a row of one pair is that
// pair's later duration up to the slacks.
TEST(RowDurationBounds, LaterDurationsStayAboveTheirFloors) {
  std::mt19937_64 engine(23);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::size_t checked = 0;
  for (const bool follow : {false, true}) {
    for (const kernels::ModeScale scale : {kernels::ModeScale::linear, kernels::ModeScale::log}) {
      for (const double dims : {1.0, 2.0, 3.0, 20.0, 300.0}) {
        for (int trial = 0; trial < 400; ++trial) {
          // A pair made at a step with m0 live clusters and time T0; a_l + a_r = v_l + t_l +
          // v_r + t_r with t <= 0, so r = a - 2 T >= 0.
          const double eps = std::exp2(60.0 * unit(engine) - 30.0);
          const double t_l = -std::exp2(20.0 * unit(engine) - 10.0) * unit(engine);
          const double t_r = -std::exp2(20.0 * unit(engine) - 10.0) * unit(engine);
          const double v = std::exp2(20.0 * unit(engine) - 10.0);
          const double offset_sum = (v + t_l) + (0.5 * v + t_r);
          const std::size_t m0 = 3 + static_cast<std::size_t>(unit(engine) * 5000.0);
          double time = std::min(t_l, t_r) - std::exp2(10.0 * unit(engine) - 12.0) * unit(engine);
          RowDurationBounds bounds(1);
          if (follow) bounds.follow_rate(scale, dims);
          const double first = duration(scale, rate(m0), dims, eps, offset_sum - 2.0 * time);
          bounds.add(0, first, offset_sum, time, follow ? eps : kNoEps, rate(m0));
          // Later steps: fewer clusters, earlier times.
          for (std::size_t m = m0 - 1; m >= 2 && m + 40 > m0; --m) {
            time -= std::exp2(12.0 * unit(engine) - 14.0) * unit(engine);
            const double later = duration(scale, rate(m), dims, eps, offset_sum - 2.0 * time);
            const double floor =
                RowDurationBounds::floor(bounds.floor_part(0, time, rate(m)), later);
            ASSERT_LE(floor, later) << "d " << dims << ", eps " << eps << ", m " << m;
            if (follow) {
              const double scale_of_terms =
                  std::abs(later) + std::abs(offset_sum) + std::abs(time) + std::abs(first);
              ASSERT_NEAR(floor, later, 1e-9 * scale_of_terms)
                  << "d " << dims << ", eps " << eps << ", m " << m;
            }
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 200000u);
}

// A row whose pairs join at different steps, the later ones with smaller or larger distances
// (the key moves to a smaller eps): every pair's later duration stays above the row's floor.
TEST(RowDurationBounds, FloorsThatFollowTheRateHoldAsPairsJoin) {
  std::mt19937_64 engine(29);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::size_t checked = 0;
  for (const kernels::ModeScale scale : {kernels::ModeScale::linear, kernels::ModeScale::log}) {
    for (const double dims : {1.0, 3.0, 20.0}) {
      for (int trial = 0; trial < 300; ++trial) {
        struct Pair {
          double eps, offset_sum;
        };
        std::vector<Pair> pairs;
        RowDurationBounds bounds(1);
        bounds.follow_rate(scale, dims);
        std::size_t m = 2000 + static_cast<std::size_t>(unit(engine) * 3000.0);
        double time = -unit(engine);
        for (int step = 0; step < 60; ++step, --m) {
          time -= std::exp2(12.0 * unit(engine) - 14.0) * unit(engine);
          if (step % 6 == 0) {  // a pair joins: any distance, nearer or farther than the others
            pairs.push_back({std::exp2(30.0 * unit(engine) - 15.0), unit(engine) + 0.5});
            const Pair& p = pairs.back();
            bounds.add(0, duration(scale, rate(m), dims, p.eps, p.offset_sum - 2.0 * time),
                       p.offset_sum, time, p.eps, rate(m));
          }
          const double floor_part = bounds.floor_part(0, time, rate(m));
          for (const Pair& p : pairs) {
            const double later = duration(scale, rate(m), dims, p.eps, p.offset_sum - 2.0 * time);
            ASSERT_LE(RowDurationBounds::floor(floor_part, later), later)
                << "d " << dims << ", eps " << p.eps << ", m " << m;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 50000u);
}

// bases gives base for each slot, vectorized, where the floors follow the rate and where not.
TEST(RowDurationBounds, BasesAreEachSlotsBase) {
  for (const bool follow : {false, true}) {
    RowDurationBounds bounds(4);
    if (follow) bounds.follow_rate(kernels::ModeScale::linear, 5.0);
    bounds.add(0, 0.3, 1.0, -0.5, 2.0, 40.0);
    bounds.add(2, 0.1, 2.0, -0.5, 0.5, 40.0);
    bounds.add(2, 0.2, 2.0, -0.5, 0.25, 30.0);
    const std::size_t slots[4] = {2, 0, 1, 3};
    double out[4];
    bounds.bases(slots, 4, 20.0, out);
    for (std::size_t x = 0; x < 4; ++x) EXPECT_EQ(out[x], bounds.base(slots[x], 20.0)) << x;
    EXPECT_EQ(out[2], std::numeric_limits<double>::infinity());  // slot 1: no pair
    // A base is the floor part less the time, up to slacks far below the margin (1e-9 of the
    // magnitudes) that the bases' search adds (row_bound_step.hpp).
    EXPECT_NEAR(out[0], bounds.floor_part(2, -0.7, 20.0) + 0.7, 1e-11);
  }
}

TEST(RowDurationBounds, ARowsBoundIsItsLowestPairs) {
  RowDurationBounds bounds(3);
  bounds.add(1, 5.0, 2.0, -1.0, kNoEps, 10.0);
  bounds.add(1, 3.0, 4.0, -1.0, kNoEps, 10.0);
  bounds.add(1, 7.0, 1.0, -1.0, kNoEps, 10.0);
  // 3 - (-1) = 4, less a slack of 1e-12 (4 * 3 + 2 * 4 + 4 * 1).
  EXPECT_NEAR(bounds.floor_part(1, -1.0, 10.0), 3.0, 1e-9);
  EXPECT_LT(bounds.floor_part(1, -1.0, 10.0), 3.0);
  EXPECT_EQ(bounds.floor_part(0, -1.0, 10.0), std::numeric_limits<double>::infinity());
  bounds.clear(1);
  EXPECT_EQ(bounds.floor_part(1, -1.0, 10.0), std::numeric_limits<double>::infinity());
  // floor is monotone in the part, whatever the best.
  for (const double best : {0.0, -3.0, 1e9}) {
    EXPECT_LE(RowDurationBounds::floor(1.0, best), RowDurationBounds::floor(1.0 + 1e-15, best));
    EXPECT_LE(RowDurationBounds::floor(1.0, best), 1.0);
  }
}

}  // namespace
}  // namespace kingman::detail
