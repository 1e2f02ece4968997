#pragma once
// Scores of a tree against class labels (MODEL.md section 11).
#include <optional>

#include "kingman/data/labels.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman {

struct TreeScores {
  // Heller & Ghahramani (2005): the mean, over unordered pairs of leaves of one class c, of the
  // fraction of leaves of class c in the smallest subtree holding both. 1 when no two leaves
  // share a class (there is nothing to get wrong).
  double dendrogram_purity = 0.0;
  // Teh et al. (2008): the number of internal nodes whose leaves all share one class, divided by
  // its largest possible value n - #classes (#classes = distinct classes present). 1 when
  // n == #classes (every class a singleton: no node can be pure and none could be).
  double subtree_score = 0.0;
  // Each leaf's class is predicted as the majority class among the leaves of its sibling
  // subtree (the other child of its parent), ties going to the smallest class index; the score
  // is the fraction of leaves predicted correctly. 1 for a single-leaf tree.
  double leave_one_out_accuracy = 0.0;
};

// Throws Error if the tree is invalid or incomplete, InputError if labels.class_of does not
// hold exactly one class per leaf. Runs in O(n log n) time (class counts merged small into
// large), so scoring is cheap next to fitting even for many classes.
TreeScores score_tree(const MergeTree& tree, const Labels& labels);

}  // namespace kingman
