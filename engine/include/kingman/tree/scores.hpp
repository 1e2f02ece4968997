#pragma once
// Scores of a tree against class labels (MODEL.md section 11).
#include <optional>

#include "kingman/data/labels.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman {

struct TreeScores {
  double dendrogram_purity = 0.0;  // Heller & Ghahramani: mean over same-class leaf pairs
  double subtree_score = 0.0;      // #pure internal nodes / (n - #classes)
  double leave_one_out_accuracy = 0.0;  // label of each leaf predicted by its nearest leaves
};

TreeScores score_tree(const MergeTree& tree, const Labels& labels);

}  // namespace kingman
