// The per-dimension offset kernels (offset_sums.hpp) against scalar references written here.
//
// Error bounds (u = 2^-53): both slope versions round each term identically (the same IEEE
// operations per dimension); only the order of the k - 1 additions differs, and any order is
// within (k - 1) u (1 + O(u)) of the exact sum of the rounded terms relative to the sum of their
// magnitudes M, so the two differ by at most 2 k u M. The gather's places are single IEEE
// operations, equal bit for bit; its sums follow the same bound.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kingman/kernels/offset_sums.hpp"

namespace kingman::kernels {
namespace {

constexpr double kUlp = 0x1p-53;
constexpr double kInf = std::numeric_limits<double>::infinity();

// `count` real entries (offsets within a few factors of each other, squared differences from 0
// to well beyond them) padded to whole blocks with (+inf, 0).
struct Entries {
  std::vector<double> offset, squared_delta;
  double base = kInf;  // the least offset
};

Entries draw_entries(std::size_t count, std::mt19937_64& engine) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double scale = std::pow(10.0, std::floor(7.0 * unit(engine)) - 3.0);
  Entries e;
  e.offset.assign(padded_size(count), kInf);
  e.squared_delta.assign(padded_size(count), 0.0);
  for (std::size_t j = 0; j < count; ++j) {
    e.offset[j] = scale * (0.2 + 3.0 * unit(engine));
    e.squared_delta[j] = j % 5 == 0 ? 0.0 : scale * std::pow(10.0, 4.0 * unit(engine) - 2.0);
    e.base = std::min(e.base, e.offset[j]);
  }
  return e;
}

TEST(OffsetSums, SlopeMatchesTheReferenceForEveryCount) {
  std::mt19937_64 engine(11);
  for (std::size_t count = 1; count <= 70; ++count) {
    for (int trial = 0; trial < 20; ++trial) {
      const Entries e = draw_entries(count, engine);
      const std::size_t padded = e.offset.size();
      for (const double x : {1e-3 * e.base, e.base, 30.0 * e.base}) {
        const OffsetSlope fast =
            offset_slope(e.offset.data(), e.squared_delta.data(), padded, e.base, x);
        const OffsetSlope reference =
            offset_slope_reference(e.offset.data(), e.squared_delta.data(), padded, e.base, x);
        double value_magnitude = 0.0, change_magnitude = 0.0;
        for (std::size_t j = 0; j < count; ++j) {
          const double inverse = 1.0 / ((e.offset[j] - e.base) + x);
          value_magnitude += std::fabs((e.squared_delta[j] * inverse - 1.0) * inverse);
          change_magnitude +=
              std::fabs((1.0 - 2.0 * e.squared_delta[j] * inverse) * inverse * inverse);
        }
        const double k = static_cast<double>(count);
        EXPECT_LE(std::fabs(fast.value - reference.value), 2.0 * k * kUlp * value_magnitude)
            << "count " << count << " x " << x;
        EXPECT_LE(std::fabs(fast.change - reference.change), 2.0 * k * kUlp * change_magnitude)
            << "count " << count << " x " << x;
      }
    }
  }
}

// Padding entries are exact zeros: a further block of them leaves every lane, and so the sums'
// bits, as they were.
TEST(OffsetSums, PaddingAddsNothing) {
  std::mt19937_64 engine(12);
  for (std::size_t count = 1; count <= 40; ++count) {
    Entries e = draw_entries(count, engine);
    const std::size_t padded = e.offset.size();
    const OffsetSlope before =
        offset_slope(e.offset.data(), e.squared_delta.data(), padded, e.base, 0.7 * e.base);
    e.offset.resize(padded + kOffsetBlock, kInf);
    e.squared_delta.resize(padded + kOffsetBlock, 0.0);
    const OffsetSlope after = offset_slope(e.offset.data(), e.squared_delta.data(),
                                           padded + kOffsetBlock, e.base, 0.7 * e.base);
    EXPECT_EQ(before.value, after.value) << "count " << count;
    EXPECT_EQ(before.change, after.change) << "count " << count;
  }
}

// Two clusters with a missing pattern each: every dimension lands in its own place, with the
// padding entry where either lacks it, and the summary describes the shared ones.
TEST(OffsetSums, GatherPlacesEachDimensionAndSummarizesTheShared) {
  std::mt19937_64 engine(13);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::size_t d = 1; d <= 37; ++d) {
    for (int trial = 0; trial < 30; ++trial) {
      // From every dimension observed by both (trial 0) to none shared (the last trials).
      const double missing = trial == 0 ? 0.0 : trial >= 27 ? 1.0 : unit(engine);
      // Rows padded as gather_offsets reads them: variance +inf after d.
      std::vector<double> lm(padded_size(d), 0.0), lv(padded_size(d), kInf),
          rm(padded_size(d), 0.0), rv(padded_size(d), kInf);
      for (std::size_t j = 0; j < d; ++j) {
        lm[j] = normal(engine);
        rm[j] = normal(engine);
        lv[j] = unit(engine) < missing ? kInf : unit(engine);
        rv[j] = unit(engine) < missing ? kInf : unit(engine);
        // A missing entry's mean is arbitrary (a leaf's is NaN): it must not reach the sums.
        if (std::isinf(lv[j])) lm[j] = std::numeric_limits<double>::quiet_NaN();
      }
      const double dt = 0.25 * unit(engine);
      std::vector<double> offsets(padded_size(d), -1.0), squared(padded_size(d), -1.0);
      OffsetSummary summary{};
      gather_offsets(lm.data(), lv.data(), rm.data(), rv.data(), d, dt, offsets.data(),
                     squared.data(), summary);
      std::size_t count = 0;
      double least = kInf, greatest = -kInf;
      long double sum = 0.0L, distance = 0.0L, sum_magnitude = 0.0L;
      for (std::size_t j = 0; j < padded_size(d); ++j) {
        const bool both = j < d && std::isfinite(lv[j]) && std::isfinite(rv[j]);
        if (!both) {
          EXPECT_EQ(offsets[j], kInf) << "d " << d << " place " << j;
          EXPECT_EQ(squared[j], 0.0) << "d " << d << " place " << j;
          continue;
        }
        const double offset = (lv[j] + rv[j]) + dt;
        const double difference = lm[j] - rm[j];
        EXPECT_EQ(offsets[j], offset) << "d " << d << " place " << j;
        EXPECT_EQ(squared[j], difference * difference) << "d " << d << " place " << j;
        ++count;
        least = std::min(least, offset);
        greatest = std::max(greatest, offset);
        sum += offset;
        sum_magnitude += offset;
        distance += difference * difference;
      }
      ASSERT_EQ(summary.count, count) << "d " << d;
      EXPECT_EQ(summary.least, least) << "d " << d;
      EXPECT_EQ(summary.greatest, greatest) << "d " << d;
      const double bound = 2.0 * static_cast<double>(d) * kUlp;
      EXPECT_LE(std::fabs(summary.sum - static_cast<double>(sum)),
                bound * static_cast<double>(sum_magnitude))
          << "d " << d;
      EXPECT_LE(std::fabs(summary.squared_distance - static_cast<double>(distance)),
                bound * static_cast<double>(distance))
          << "d " << d;
    }
  }
}

}  // namespace
}  // namespace kingman::kernels
