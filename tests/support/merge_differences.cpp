#include "merge_differences.hpp"

#include <algorithm>

namespace kingman::testing_support {

std::size_t differing_merges(const MergeTree& expected, const MergeTree& actual) {
  const std::size_t shared = std::min(expected.merges.size(), actual.merges.size());
  std::size_t differing = std::max(expected.merges.size(), actual.merges.size()) - shared;
  for (std::size_t k = 0; k < shared; ++k) {
    const Merge& a = expected.merges[k];
    const Merge& b = actual.merges[k];
    differing += a.left != b.left || a.right != b.right || a.height != b.height;
  }
  return differing;
}

}  // namespace kingman::testing_support
