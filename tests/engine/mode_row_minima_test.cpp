// Rows rescored together without the pair cache (engine/src/inference/mode_row_minima.hpp) find
// what each row finds alone: the first smallest duration, its partner, the largest offset sum,
// bit for bit. Rows span several partner chunks, the chunks run on 1 or 2 threads, rows go in
// several groups, and equal minima sit in different chunks (the first must win).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../../engine/src/inference/mode_row_minima.hpp"
#include "../../engine/src/scheduler/run_arena.hpp"

namespace kingman::detail {
namespace {

// Row x alone, as greedy_rescan's row_minimum computes it.
RowMinimum alone(std::size_t x, const std::vector<const double*>& means, const ModeRowStep& step) {
  const std::size_t count = step.live_count - x - 1;
  std::vector<double> eps(count), offsets(count), durations(count);
  kernels::squared_distances_in_order(means[x], means.data() + x + 1, count, step.d, eps.data());
  for (std::size_t k = 0; k < count; ++k)
    offsets[k] = step.live_offset[x] + step.live_offset[x + 1 + k] - 2.0 * step.time;
  kernels::mode_durations(step.scale, step.lambda, step.dims, eps.data(), offsets.data(),
                          durations.data(), count);
  RowMinimum found;
  found.index = kernels::first_minimum_below(durations.data(), count,
                                             std::numeric_limits<double>::infinity());
  found.finite = found.index < count;
  if (found.finite) found.duration = durations[found.index];
  found.offset_sum = kernels::max_array(offsets.data(), count) + 2.0 * std::abs(step.time);
  return found;
}

std::uint64_t bits(double x) {
  return std::bit_cast<std::uint64_t>(x);
}

TEST(ModeRowMinima, RowsTogetherFindWhatEachRowFindsAlone) {
  const std::size_t m = 3 * kModeRowChunk + 123, d = 13;
  std::mt19937_64 engine(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> x(m * d);
  for (double& v : x) v = normal(engine);
  std::vector<double> offsets(m);
  for (double& a : offsets) a = 0.5 + unit(engine);
  // Row 7's nearest partners: two identical points in different chunks (positions 40 and
  // 2 * chunk + 5), with equal offsets, so their durations are equal; the first must be chosen.
  const std::size_t near_a = 40, near_b = 2 * kModeRowChunk + 5;
  for (std::size_t j = 0; j < d; ++j) {
    x[near_a * d + j] = x[7 * d + j] + 1e-3;
    x[near_b * d + j] = x[near_a * d + j];
  }
  offsets[near_b] = offsets[near_a];
  std::vector<const double*> means(m);
  for (std::size_t i = 0; i < m; ++i) means[i] = x.data() + i * d;
  // Rows in several chunks, two in the same block, some near the end.
  std::vector<std::size_t> rows = {
      3,    7,     8,    500, kModeRowChunk - 1, kModeRowChunk, 1500, 2 * kModeRowChunk + 3,
      2400, m - 9, m - 2};
  // More rows than a group holds (kModeRowGroup), so that groups follow one another.
  for (std::size_t r = 2401; r < m - 9; r += 11) rows.push_back(r);
  std::sort(rows.begin(), rows.end());
  ASSERT_GT(rows.size(), 2 * kModeRowGroup);
  for (const kernels::ModeScale scale : {kernels::ModeScale::linear, kernels::ModeScale::log}) {
    ModeRowStep step;
    step.live_count = m;
    step.d = d;
    step.live_offset = offsets.data();
    step.time = -0.25;
    step.lambda = 3.5;
    step.dims = static_cast<double>(d);
    step.scale = scale;
    for (const int threads : {1, 2}) {
      // A large declared cost per pair, so that the chunks split on 2 threads.
      step.pair_work = std::size_t{1} << 12;
      std::vector<RowMinimum> together(rows.size());
      RunArena(threads).execute([&] {
        mode_row_minima(
            std::span<const std::size_t>(rows), step, [&](std::size_t y) { return means[y]; },
            std::span<RowMinimum>(together));
      });
      for (std::size_t k = 0; k < rows.size(); ++k) {
        const RowMinimum expected = alone(rows[k], means, step);
        const std::string what = "row " + std::to_string(rows[k]) + ", " + std::to_string(threads) +
                                 " threads, scale " + std::to_string(static_cast<int>(scale));
        EXPECT_EQ(together[k].index, expected.index) << what;
        EXPECT_EQ(bits(together[k].duration), bits(expected.duration)) << what;
        EXPECT_EQ(bits(together[k].offset_sum), bits(expected.offset_sum)) << what;
        EXPECT_EQ(together[k].finite, expected.finite) << what;
      }
      // Row 7's minimum is the earlier of the two equal partners.
      EXPECT_EQ(together[1].index, near_a - 7 - 1);
    }
  }
}

}  // namespace
}  // namespace kingman::detail
