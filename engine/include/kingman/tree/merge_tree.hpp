#pragma once
// A binary tree as an ordered list of merges, the currency between inference and output.
// Node ids follow scipy's linkage convention: leaves 0..n-1, the cluster formed by merge i is
// n+i. Heights are h = -t >= 0 (MODEL.md section 1) and are nondecreasing along the list.
#include <cstddef>
#include <string>
#include <vector>

namespace kingman {

struct Merge {
  std::size_t left = 0;   // node id of one child
  std::size_t right = 0;  // node id of the other child
  double height = 0.0;    // merge height h = -t
};

struct MergeTree {
  std::size_t leaf_count = 0;  // n
  std::vector<Merge> merges;   // n-1 merges for a complete tree

  std::size_t node_count() const { return leaf_count + merges.size(); }
  bool complete() const { return leaf_count > 0 && merges.size() + 1 == leaf_count; }
};

// Throws kingman::Error if ids are out of range, a node is used twice, or heights decrease.
void validate(const MergeTree& tree);

// Leaf count of every node (leaves 1), indexed by node id.
std::vector<std::size_t> cluster_sizes(const MergeTree& tree);

}  // namespace kingman
