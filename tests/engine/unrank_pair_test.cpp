// unrank_pair (pair_numbering.hpp): the O(1) inverse of the lexicographic numbering of pairs
// (x < y) of m live clusters, checked against the enumeration itself for every index of small
// m, and at the ends of each first position's run for m up to 100 000, where the square root's
// rounding matters most.
#include <gtest/gtest.h>

#include <cstddef>
#include <utility>

#include "../../engine/src/inference/smc/pair_numbering.hpp"

namespace kingman::detail {
namespace {

TEST(UnrankPair, InvertsTheLexicographicNumberingForEveryIndex) {
  for (std::size_t m = 2; m <= 80; ++m) {
    std::size_t index = 0;
    for (std::size_t x = 0; x < m; ++x)
      for (std::size_t y = x + 1; y < m; ++y, ++index)
        ASSERT_EQ(unrank_pair(index, m), (std::pair{x, y})) << "m = " << m << ", index " << index;
  }
}

TEST(UnrankPair, FindsTheFirstAndLastPairOfEveryRunAtLargeM) {
  for (const std::size_t m : {1000u, 2401u, 65536u, 100000u}) {
    std::size_t first = 0;  // number of the pair (x, x + 1)
    for (std::size_t x = 0; x + 1 < m; ++x) {
      const std::size_t run = m - 1 - x;
      ASSERT_EQ(unrank_pair(first, m), (std::pair{x, x + 1})) << "m = " << m;
      ASSERT_EQ(unrank_pair(first + run - 1, m), (std::pair{x, m - 1})) << "m = " << m;
      first += run;
    }
    EXPECT_EQ(first, m * (m - 1) / 2);
  }
}

}  // namespace
}  // namespace kingman::detail
