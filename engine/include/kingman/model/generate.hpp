#pragma once
// Sampling data from the model: a tree from Kingman's n-coalescent, then Brownian diffusion
// down the tree (MODEL.md sections 2-3). Tests and benchmarks use it as ground truth.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kingman/data/labels.hpp"
#include "kingman/data/table.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman {

struct GenerateOptions {
  std::size_t n = 100;         // points
  std::size_t d = 2;           // dimensions
  std::uint64_t seed = 1;      // random seed
  double scale = 1.0;          // Lambda = scale * I
  double leaf_variance = 0.0;  // v0: observation noise v0 * Lambda added at the leaves
  std::size_t clusters = 2;    // k: labels from cutting the true tree into k clusters
};

struct GeneratedData {
  Table data;      // n x d, the root sits at the origin
  MergeTree tree;  // the true tree with its merge heights
  Labels labels;   // cluster of each point when the tree is cut into k subtrees
};

GeneratedData generate(const GenerateOptions& options);

// Cluster index of each leaf after undoing the last k-1 merges (k subtrees), numbered by the
// order of their smallest leaf.
std::vector<std::size_t> cut_tree(const MergeTree& tree, std::size_t clusters);

}  // namespace kingman
