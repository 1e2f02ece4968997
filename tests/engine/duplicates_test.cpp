// Rows that coincide for the model (engine/src/data/duplicates.cpp): exact repeats, and with
// missing entries rows that agree wherever both are observed, but not rows that share no
// observed column.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kingman/data/duplicates.hpp"

namespace kingman {
namespace {

const double kNaN = std::nan("");

TEST(Duplicates, RowsAgreeingWhereBothAreObserved) {
  // Row 0 shares no column with rows 1 and 2; rows 1 and 3 agree on column 1, the only one
  // both observe.
  const std::vector<double> x = {1, kNaN, kNaN, kNaN, 5, kNaN, kNaN, 3, 2, 4, 5, 6};
  const auto pair = find_rows_agreeing_where_both_observed(x.data(), 4, 3);
  ASSERT_TRUE(pair.has_value());
  EXPECT_EQ(pair->first, 1u);
  EXPECT_EQ(pair->second, 3u);
  EXPECT_FALSE(find_duplicate_rows(x.data(), 4, 3).has_value());
  // Disagreeing on one shared column is enough to differ; sharing none is not coinciding.
  const std::vector<double> apart = {1, kNaN, 2, 3, 1, 4, kNaN, 0, 9};
  EXPECT_FALSE(find_rows_agreeing_where_both_observed(apart.data(), 3, 3).has_value());
}

}  // namespace
}  // namespace kingman
