// Greedy-MaxProb's row choice (engine/src/inference/maxprob_row.hpp), which scores
// exactly only the pairs its bounds leave, against scoring every pair exactly and scanning by
// best_live_pair.hpp's rules: the same pair, score and duration, bit for bit, on random rows,
// rows with exact and one-ulp ties at the minimum, and rows with pairs that have no bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "../../engine/src/inference/maxprob_row.hpp"
#include "kingman/kernels/mode_durations.hpp"

namespace kingman::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::uint64_t bits(double x) {
  return std::bit_cast<std::uint64_t>(x);
}

// Every pair scored exactly; in the first row pair 0 starts whatever its score, elsewhere the
// scan starts from +inf; a later pair replaces the kept one only with a smaller score.
MaxProbRowMinimum scanned(double lambda, double dims, const std::vector<double>& eps,
                          const std::vector<double>& offset, bool first_row) {
  MaxProbRowMinimum best{eps.size(), kInf, 0.0};
  for (std::size_t k = 0; k < eps.size(); ++k) {
    const double duration =
        std::max(kernels::linear_mode_duration(lambda, dims, eps[k], offset[k]), 0.0);
    const double score = maxprob_pair_score(lambda, dims, eps[k], offset[k], duration);
    if ((first_row && k == 0) || score < best.score) best = {k, score, duration};
  }
  return best;
}

void expect_same_choice(double lambda, double dims, const std::vector<double>& eps,
                        const std::vector<double>& offset, const char* what) {
  for (const bool first_row : {false, true}) {
    const MaxProbRowMinimum expected = scanned(lambda, dims, eps, offset, first_row);
    const MaxProbRowMinimum found =
        maxprob_row_minimum(lambda, dims, eps.data(), offset.data(), eps.size(), first_row);
    ASSERT_EQ(found.index, expected.index) << what << ", first row " << first_row;
    if (expected.index == eps.size()) continue;
    ASSERT_EQ(bits(found.score), bits(expected.score)) << what;
    ASSERT_EQ(bits(found.duration), bits(expected.duration)) << what;
  }
}

TEST(MaxProbRow, ChoosesWhatScoringEveryPairChooses) {
  std::mt19937_64 engine(17);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> position(0, 1 << 20);
  for (const double dims : {1.0, 2.0, 20.0, 64.0}) {
    for (const double lambda : {0.01, 1.0, 1225.0}) {
      for (const std::size_t count : {1u, 2u, 8u, 9u, 40u, 333u}) {
        for (int trial = 0; trial < 20; ++trial) {
          std::vector<double> eps(count), offset(count);
          for (std::size_t k = 0; k < count; ++k) {
            eps[k] = std::exp2(12.0 * unit(engine) - 6.0) * dims;
            offset[k] = 0.05 + unit(engine);
          }
          expect_same_choice(lambda, dims, eps, offset, "random");
          if (count < 2) continue;
          // Exact ties at the minimum: its pair copied before and after it.
          const MaxProbRowMinimum least = scanned(lambda, dims, eps, offset, false);
          const std::size_t before = static_cast<std::size_t>(position(engine)) % count;
          const std::size_t after = static_cast<std::size_t>(position(engine)) % count;
          std::vector<double> tied_eps = eps, tied_offset = offset;
          for (const std::size_t at : {before, after}) {
            tied_eps[at] = eps[least.index];
            tied_offset[at] = offset[least.index];
          }
          expect_same_choice(lambda, dims, tied_eps, tied_offset, "exact ties");
          // One-ulp neighbours of the minimum's distance, whose scores the bounds cannot tell
          // apart: the exact scores decide.
          tied_eps[before] = std::nextafter(eps[least.index], kInf);
          tied_eps[after] = std::nextafter(eps[least.index], 0.0);
          expect_same_choice(lambda, dims, tied_eps, tied_offset, "one-ulp ties");
        }
      }
    }
  }
}

// Near ties between pairs of different s, whose approximate logs err differently: pairs whose
// durations clamp to 0 have scores (d / 2)(log 2 pi + log r) + eps / (2 r), so a distance for
// any score within reach follows from r. Pairs put at the row's minimum score this way (each
// within a few ulps of it) must all be scored exactly, and the exact scores decide.
TEST(MaxProbRow, NearTiesOfDifferentOffsetsAreScoredExactly) {
  std::mt19937_64 engine(19);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double log_two_pi = std::log(2.0 * 3.14159265358979323846);
  std::size_t placed = 0;
  for (const double dims : {2.0, 20.0, 64.0}) {
    for (int trial = 0; trial < 50; ++trial) {
      const double lambda = 0.5;
      const std::size_t count = 64;
      std::vector<double> eps(count), offset(count);
      for (std::size_t k = 0; k < count; ++k) {
        offset[k] = 0.5 + 40.0 * unit(engine);
        eps[k] = 0.05 * dims * offset[k] * (1.0 + unit(engine));
      }
      const MaxProbRowMinimum least = scanned(lambda, dims, eps, offset, false);
      for (int copy = 0; copy < 6; ++copy) {
        const double r = offset[least.index] * std::exp2(4.0 * unit(engine) - 3.0);
        const double e = 2.0 * r * (least.score - 0.5 * dims * (log_two_pi + std::log(r)));
        if (!(e >= 0.0) || kernels::linear_mode_duration(lambda, dims, e, r) > 0.0) continue;
        const std::size_t at = static_cast<std::size_t>(unit(engine) * count);
        eps[at] = e;
        offset[at] = r;
        ++placed;
      }
      expect_same_choice(lambda, dims, eps, offset, "near ties of different offsets");
    }
  }
  EXPECT_GT(placed, 100u);
}

// Pairs without bounds (s = 0: identical points and no leaf variance, whose score is NaN; a NaN
// distance) are scored exactly: in the first row a NaN pair 0 is kept, elsewhere never chosen.
TEST(MaxProbRow, PairsWithoutBoundsFollowTheScanRules) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expect_same_choice(1.0, 3.0, {0.0, 2.0, 1.0}, {0.0, 0.5, 0.5}, "s = 0 first");
  expect_same_choice(1.0, 3.0, {2.0, 0.0, 1.0}, {0.5, 0.0, 0.5}, "s = 0 later");
  expect_same_choice(1.0, 3.0, {nan, 2.0, 1.0}, {0.5, 0.5, 0.5}, "NaN first");
  expect_same_choice(1.0, 3.0, {0.0, 0.0}, {0.0, 0.0}, "every pair s = 0");
  expect_same_choice(1.0, 3.0, {0.0}, {0.0}, "one pair, s = 0");
  // Checked beyond the scan: the first row keeps its NaN pair 0; the others choose nothing.
  const std::vector<double> eps = {0.0, 0.0}, offset = {0.0, 0.0};
  const MaxProbRowMinimum first = maxprob_row_minimum(1.0, 3.0, eps.data(), offset.data(), 2, true);
  EXPECT_EQ(first.index, 0u);
  EXPECT_TRUE(std::isnan(first.score));
  EXPECT_EQ(maxprob_row_minimum(1.0, 3.0, eps.data(), offset.data(), 2, false).index, 2u);
}

}  // namespace
}  // namespace kingman::detail
