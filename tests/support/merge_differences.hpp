#pragma once
// How many merges of two trees differ in their pair or in their height's bits: what the
// thread-count tests require to be 0.
#include <cstddef>

#include "kingman/tree/merge_tree.hpp"

namespace kingman::testing_support {

// Merges at the same index with another pair or another height; every merge of the longer tree
// beyond the shorter one's counts too.
std::size_t differing_merges(const MergeTree& expected, const MergeTree& actual);

}  // namespace kingman::testing_support
