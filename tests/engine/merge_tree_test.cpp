#include "kingman/tree/merge_tree.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "kingman/error.hpp"

namespace kingman {
namespace {

// ((0,1),(2,3)) with the root above both cherries.
MergeTree balanced_four() {
  return MergeTree{4, {{0, 1, 1.0}, {2, 3, 1.5}, {4, 5, 2.0}}};
}

// Expects validate to throw kingman::Error whose message contains `fragment`.
void expect_invalid(const MergeTree& tree, const std::string& fragment) {
  try {
    validate(tree);
    FAIL() << "validate accepted a bad tree; expected a message with '" << fragment << "'";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(MergeTree, ValidateAcceptsCompleteAndPartialTrees) {
  EXPECT_NO_THROW(validate(balanced_four()));
  EXPECT_TRUE(balanced_four().complete());
  const MergeTree partial{4, {{0, 1, 0.5}}};
  EXPECT_NO_THROW(validate(partial));
  EXPECT_FALSE(partial.complete());
  EXPECT_NO_THROW(validate(MergeTree{1, {}}));
  // Equal heights (zero durations) are allowed.
  EXPECT_NO_THROW(validate(MergeTree{3, {{0, 1, 0.0}, {3, 2, 0.0}}}));
}

TEST(MergeTree, ValidateRejectsBadIds) {
  expect_invalid(MergeTree{0, {}}, "no leaves");
  expect_invalid(MergeTree{2, {{0, 1, 1.0}, {2, 2, 2.0}}}, "merges for 2 leaves");
  // Merge 1 creates node 5; it cannot use itself or later ids.
  expect_invalid(MergeTree{4, {{0, 1, 1.0}, {5, 2, 1.5}, {4, 3, 2.0}}}, "merge 1");
  expect_invalid(MergeTree{4, {{0, 1, 1.0}, {2, 3, 1.5}, {4, 99, 2.0}}}, "child id 99");
  // A node merged twice.
  expect_invalid(MergeTree{4, {{0, 1, 1.0}, {1, 2, 1.5}, {4, 5, 2.0}}}, "merge 1");
  expect_invalid(MergeTree{4, {{0, 0, 1.0}}}, "already merged");
}

TEST(MergeTree, ValidateRejectsBadHeights) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  expect_invalid(MergeTree{3, {{0, 1, -0.5}, {3, 2, 1.0}}}, "merge 0");
  expect_invalid(MergeTree{3, {{0, 1, 1.0}, {3, 2, nan}}}, "merge 1");
  expect_invalid(MergeTree{3, {{0, 1, 1.0}, {3, 2, inf}}}, "finite");
  expect_invalid(MergeTree{4, {{0, 1, 1.0}, {2, 3, 2.0}, {4, 5, 1.5}}}, "nondecreasing");
}

TEST(MergeTree, ClusterSizesCountLeaves) {
  EXPECT_EQ(cluster_sizes(balanced_four()), (std::vector<std::size_t>{1, 1, 1, 1, 2, 2, 4}));
  // Caterpillar (((0,1),2),3).
  const MergeTree caterpillar{4, {{0, 1, 1.0}, {4, 2, 2.0}, {5, 3, 3.0}}};
  EXPECT_EQ(cluster_sizes(caterpillar), (std::vector<std::size_t>{1, 1, 1, 1, 2, 3, 4}));
  EXPECT_THROW(cluster_sizes(MergeTree{2, {{0, 7, 1.0}}}), Error);
}

}  // namespace
}  // namespace kingman
