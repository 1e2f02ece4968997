#include "kingman/tree/merge_tree.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kingman/error.hpp"

namespace kingman {

namespace {

std::string merge_context(std::size_t index) {
  return "merge " + std::to_string(index) + ": ";
}

}  // namespace

void validate(const MergeTree& tree) {
  const std::size_t n = tree.leaf_count;
  if (n == 0) throw Error("merge tree: no leaves");
  if (tree.merges.size() >= n) {
    throw Error("merge tree: " + std::to_string(tree.merges.size()) + " merges for " +
                std::to_string(n) + " leaves (at most " + std::to_string(n - 1) + ")");
  }
  std::vector<bool> used_as_child(tree.node_count(), false);
  double previous_height = 0.0;
  for (std::size_t i = 0; i < tree.merges.size(); ++i) {
    const Merge& merge = tree.merges[i];
    const std::size_t new_node = n + i;
    for (const std::size_t child : {merge.left, merge.right}) {
      if (child >= new_node) {
        throw Error(merge_context(i) + "child id " + std::to_string(child) +
                    " does not exist yet (ids must be below " + std::to_string(new_node) + ")");
      }
      if (used_as_child[child]) {
        throw Error(merge_context(i) + "node " + std::to_string(child) +
                    " was already merged (each node is a child at most once)");
      }
      used_as_child[child] = true;
    }
    if (!std::isfinite(merge.height) || merge.height < 0.0) {
      throw Error(merge_context(i) +
                  fmt::format("height {} is not a finite number >= 0", merge.height));
    }
    if (merge.height < previous_height) {
      throw Error(merge_context(i) +
                  fmt::format("height {} is below the previous merge's height {} "
                              "(heights must be nondecreasing)",
                              merge.height, previous_height));
    }
    previous_height = merge.height;
  }
}

std::vector<std::size_t> cluster_sizes(const MergeTree& tree) {
  const std::size_t n = tree.leaf_count;
  std::vector<std::size_t> sizes(tree.node_count(), 1);
  for (std::size_t i = 0; i < tree.merges.size(); ++i) {
    const Merge& merge = tree.merges[i];
    // A bounds check only: a child id that does not exist yet would read garbage or overflow.
    if (merge.left >= n + i || merge.right >= n + i) {
      throw Error(merge_context(i) + "child id out of range (ids must be below " +
                  std::to_string(n + i) + ")");
    }
    sizes[n + i] = sizes[merge.left] + sizes[merge.right];
  }
  return sizes;
}

}  // namespace kingman
