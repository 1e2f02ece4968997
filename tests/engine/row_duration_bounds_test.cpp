// The row bounds of the rescanning greedies (engine/src/inference/row_duration_bounds.hpp):
// a pair's computed duration minus the current time never falls below what a bound made at an
// earlier step (higher rate, later time) allows, in either scale, over distances and offsets of
// many sizes; a row's bound is the lowest of its pairs'; and floor_part orders rows as floor
// does.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "../../engine/src/inference/row_duration_bounds.hpp"
#include "kingman/kernels/mode_durations.hpp"

namespace kingman::detail {
namespace {

double duration(kernels::ModeScale scale, double lambda, double dims, double eps, double offset) {
  return scale == kernels::ModeScale::linear
             ? kernels::linear_mode_duration(lambda, dims, eps, offset)
             : kernels::log_mode_duration(lambda, dims, eps, offset);
}

TEST(RowDurationBounds, LaterDurationsStayAboveTheirFloors) {
  std::mt19937_64 engine(23);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::size_t checked = 0;
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
        auto rate = [](std::size_t m) { return 0.5 * static_cast<double>(m * (m - 1)); };
        RowDurationBounds bounds(1);
        const double first = duration(scale, rate(m0), dims, eps, offset_sum - 2.0 * time);
        bounds.add(0, first, offset_sum, time);
        // Later steps: fewer clusters, earlier times.
        for (std::size_t m = m0 - 1; m >= 2 && m + 40 > m0; --m) {
          time -= std::exp2(12.0 * unit(engine) - 14.0) * unit(engine);
          const double later = duration(scale, rate(m), dims, eps, offset_sum - 2.0 * time);
          const double floor = RowDurationBounds::floor(bounds.floor_part(0, time), later);
          ASSERT_LE(floor, later) << "d " << dims << ", eps " << eps << ", m " << m;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 100000u);
}

TEST(RowDurationBounds, ARowsBoundIsItsLowestPairs) {
  RowDurationBounds bounds(3);
  bounds.add(1, 5.0, 2.0, -1.0);
  bounds.add(1, 3.0, 4.0, -1.0);
  bounds.add(1, 7.0, 1.0, -1.0);
  // 3 - (-1) = 4, less a slack of 1e-12 (4 * 3 + 2 * 4 + 4 * 1).
  EXPECT_NEAR(bounds.floor_part(1, -1.0), 3.0, 1e-9);
  EXPECT_LT(bounds.floor_part(1, -1.0), 3.0);
  EXPECT_EQ(bounds.floor_part(0, -1.0), std::numeric_limits<double>::infinity());
  bounds.clear(1);
  EXPECT_EQ(bounds.floor_part(1, -1.0), std::numeric_limits<double>::infinity());
  // floor is monotone in the part, whatever the best.
  for (const double best : {0.0, -3.0, 1e9}) {
    EXPECT_LE(RowDurationBounds::floor(1.0, best), RowDurationBounds::floor(1.0 + 1e-15, best));
    EXPECT_LE(RowDurationBounds::floor(1.0, best), 1.0);
  }
}

}  // namespace
}  // namespace kingman::detail
