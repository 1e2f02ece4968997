#include "kingman/tree/scores.hpp"

#include <cstddef>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kingman/error.hpp"

namespace kingman {

namespace {

// Leaf counts per class of one subtree, sparse so that many classes cost nothing extra, with
// its majority class kept current: counts only grow, so after adding to some classes the new
// majority is the old one or one of those just raised.
struct ClassCounts {
  std::unordered_map<std::size_t, std::size_t> count_of;
  std::size_t majority_class = 0;
  std::size_t majority_count = 0;

  void add(std::size_t cls, std::size_t amount) {
    const std::size_t count = (count_of[cls] += amount);
    if (count > majority_count || (count == majority_count && cls < majority_class)) {
      majority_class = cls;
      majority_count = count;
    }
  }
};

}  // namespace

TreeScores score_tree(const MergeTree& tree, const Labels& labels) {
  validate(tree);
  if (!tree.complete()) {
    throw Error(fmt::format("scores: the tree is incomplete ({} merges for {} leaves)",
                            tree.merges.size(), tree.leaf_count));
  }
  const std::size_t n = tree.leaf_count;
  if (labels.class_of.size() != n) {
    throw InputError(
        fmt::format("scores: {} labels for a tree with {} leaves", labels.class_of.size(), n));
  }
  const std::vector<std::size_t>& class_of = labels.class_of;

  std::unordered_map<std::size_t, std::size_t> class_sizes;
  for (const std::size_t cls : class_of) ++class_sizes[cls];
  double same_class_pairs = 0.0;  // exact: integers far below 2^53
  for (const auto& [cls, size] : class_sizes) {
    same_class_pairs += 0.5 * static_cast<double>(size) * static_cast<double>(size - 1);
  }

  const std::vector<std::size_t> sizes = cluster_sizes(tree);
  std::vector<ClassCounts> counts(tree.node_count());
  for (std::size_t leaf = 0; leaf < n; ++leaf) counts[leaf].add(class_of[leaf], 1);

  double purity_sum = 0.0;         // sum over same-class pairs of their LCA's purity
  std::size_t pure_nodes = 0;      // internal nodes with a single class
  std::size_t correct_leaves = 0;  // leaves whose sibling subtree's majority is their class
  for (std::size_t i = 0; i < tree.merges.size(); ++i) {
    const std::size_t node = n + i;
    const std::size_t left = tree.merges[i].left;
    const std::size_t right = tree.merges[i].right;
    if (left < n && counts[right].majority_class == class_of[left]) ++correct_leaves;
    if (right < n && counts[left].majority_class == class_of[right]) ++correct_leaves;

    // Small into large: each class entry moves O(log n) times over the whole tree.
    const bool left_is_larger = counts[left].count_of.size() >= counts[right].count_of.size();
    ClassCounts merged = std::move(counts[left_is_larger ? left : right]);
    ClassCounts smaller = std::move(counts[left_is_larger ? right : left]);
    // Pairs of class c whose LCA is this node number left_c * right_c, each with purity
    // (left_c + right_c) / size.
    const double node_size = static_cast<double>(sizes[node]);
    for (const auto& [cls, count] : smaller.count_of) {
      const auto found = merged.count_of.find(cls);
      if (found != merged.count_of.end()) {
        const double pairs = static_cast<double>(count) * static_cast<double>(found->second);
        purity_sum += pairs * static_cast<double>(count + found->second) / node_size;
      }
      merged.add(cls, count);
    }
    if (merged.count_of.size() == 1) ++pure_nodes;
    counts[node] = std::move(merged);
    counts[left] = ClassCounts{};  // release the children's maps
    counts[right] = ClassCounts{};
  }

  TreeScores scores;
  scores.dendrogram_purity = same_class_pairs > 0.0 ? purity_sum / same_class_pairs : 1.0;
  const std::size_t max_pure_nodes = n - class_sizes.size();
  scores.subtree_score = max_pure_nodes > 0
                             ? static_cast<double>(pure_nodes) / static_cast<double>(max_pure_nodes)
                             : 1.0;
  scores.leave_one_out_accuracy =
      n > 1 ? static_cast<double>(correct_leaves) / static_cast<double>(n) : 1.0;
  return scores;
}

}  // namespace kingman
