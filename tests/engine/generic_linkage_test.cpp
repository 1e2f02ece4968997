// generic_linkage.hpp with a pair score that is NaN: it stops with a NumericalError naming the
// pair. (It used to rescan that pair's row forever: a NaN height never equals its heap key.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "../../engine/src/inference/generic_linkage.hpp"
#include "kingman/error.hpp"

namespace kingman {
namespace {

TEST(GenericLinkage, ANaNMergeHeightStopsWithTheNodesNamed) {
  for (const auto& [first, second] : {std::pair<std::size_t, std::size_t>{0, 1}, {2, 3}}) {
    auto score = [&](std::size_t i, std::size_t j) {
      return i == first && j == second ? std::numeric_limits<double>::quiet_NaN()
                                       : 1.0 + static_cast<double>(i + j);
    };
    std::size_t merges = 0;
    try {
      detail::generic_linkage(5, score, [&](std::size_t, std::size_t, double) { ++merges; });
      ADD_FAILURE() << "no error for the NaN height of " << first << " and " << second;
    } catch (const NumericalError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("is not a number"), std::string::npos) << message;
    }
    EXPECT_LT(merges, 4u);
  }
  // Without a NaN the same scores give a complete tree.
  const MergeTree tree = detail::generic_linkage(
      5, [](std::size_t i, std::size_t j) { return 1.0 + static_cast<double>(i + j); },
      [](std::size_t, std::size_t, double) {});
  EXPECT_EQ(tree.merges.size(), 4u);
}

}  // namespace
}  // namespace kingman
