// RateOnePair::log_kill_factors (rate_one_pair.hpp), the race's batch of kill factors, must give
// exactly log_kill_factor's value for every pair: it decides most pairs negligible with a
// vectorized log that differs from std::log by a few ulps, and leaves every pair whose bound is
// near the threshold to log_kill_factor. Checked bit for bit over pairs drawn across the
// regimes (far in the tail, near the mode, killed at creation, beyond the mode), for several
// dimensions.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "../../engine/src/inference/smc/rate_one_pair.hpp"

namespace kingman::detail::race {
namespace {

TEST(RateOnePair, BatchedKillFactorsEqualTheScalarOnesBitForBit) {
  std::mt19937_64 engine(17);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto log_uniform = [&](double low, double high) {
    return std::exp(std::log(low) + (std::log(high) - std::log(low)) * unit(engine));
  };
  for (std::size_t dims : {1u, 2u, 20u, 64u, 300u}) {
    const RateOnePair pair(dims, 0.0);
    const std::size_t count = 4000;
    std::vector<double> eps(count), offset(count), offset_now(count), delta(count);
    for (std::size_t k = 0; k < count; ++k) {
      eps[k] = log_uniform(1e-4, 1e5);
      offset[k] = k % 7 == 0 ? 0.0 : log_uniform(1e-8, 1e2);
      // Some pairs killed at creation (delta = 0), the others up to far past the mode.
      delta[k] = k % 11 == 0 ? 0.0 : log_uniform(1e-10, 1e3);
      offset_now[k] = offset[k] + 2.0 * delta[k];
    }
    std::vector<double> batch(count);
    pair.log_kill_factors(eps.data(), offset.data(), offset_now.data(), delta.data(), count,
                          batch.data());
    std::size_t negligible = 0, corrected = 0;
    for (std::size_t k = 0; k < count; ++k) {
      const double scalar = pair.log_kill_factor(eps[k], offset[k], offset_now[k], delta[k]);
      ASSERT_EQ(std::bit_cast<std::uint64_t>(batch[k]), std::bit_cast<std::uint64_t>(scalar))
          << "d = " << dims << ", eps = " << eps[k] << ", offset = " << offset[k]
          << ", offset now = " << offset_now[k];
      if (delta[k] > 0.0) (scalar == -delta[k] ? negligible : corrected) += 1;
    }
    // Both kinds of killed pair occur, so both paths of the batch were compared.
    EXPECT_GT(negligible, count / 10) << "d = " << dims;
    EXPECT_GT(corrected, count / 100) << "d = " << dims;
  }
}

}  // namespace
}  // namespace kingman::detail::race
