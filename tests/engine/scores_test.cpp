#include "kingman/tree/scores.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "kingman/error.hpp"

namespace kingman {
namespace {

Labels make_labels(std::vector<std::size_t> class_of) {
  Labels labels;
  const std::size_t classes =
      class_of.empty() ? 0 : *std::max_element(class_of.begin(), class_of.end()) + 1;
  for (std::size_t c = 0; c < classes; ++c) labels.names.push_back("class" + std::to_string(c));
  labels.class_of = std::move(class_of);
  return labels;
}

// ((0,1),(2,3)): nodes 4 = (0,1), 5 = (2,3), 6 = root.
const MergeTree kBalanced{4, {{0, 1, 1.0}, {2, 3, 1.0}, {4, 5, 2.0}}};
// (((0,1),2),3): nodes 4 = (0,1), 5 = (4,2), 6 = (5,3).
const MergeTree kCaterpillar{4, {{0, 1, 1.0}, {4, 2, 2.0}, {5, 3, 3.0}}};

TEST(Scores, PerfectTreeScoresOne) {
  // Classes A A B B on ((0,1),(2,3)): both same-class pairs meet in a pure cherry.
  const TreeScores scores = score_tree(kBalanced, make_labels({0, 0, 1, 1}));
  EXPECT_DOUBLE_EQ(scores.dendrogram_purity, 1.0);
  EXPECT_DOUBLE_EQ(scores.subtree_score, 1.0);  // 2 pure nodes / (4 - 2)
  EXPECT_DOUBLE_EQ(scores.leave_one_out_accuracy, 1.0);
}

TEST(Scores, InterleavedClassesScoreLow) {
  // Classes A B A B on ((0,1),(2,3)): pairs (0,2) and (1,3) meet at the root, where each class
  // is 2 of 4 leaves: purity (1/2 + 1/2) / 2 = 1/2. No internal node is pure: subtree 0/2.
  // Every leaf's sibling is a leaf of the other class: leave-one-out 0/4.
  const TreeScores scores = score_tree(kBalanced, make_labels({0, 1, 0, 1}));
  EXPECT_DOUBLE_EQ(scores.dendrogram_purity, 0.5);
  EXPECT_DOUBLE_EQ(scores.subtree_score, 0.0);
  EXPECT_DOUBLE_EQ(scores.leave_one_out_accuracy, 0.0);
}

TEST(Scores, HandComputedCaterpillar) {
  // Classes A A B A on (((0,1),2),3). Same-class pairs: (0,1) at node 4, purity 2/2 = 1;
  // (0,3) and (1,3) at the root, purity 3/4 each: purity (1 + 3/4 + 3/4) / 3 = 5/6.
  // Pure internal nodes: only node 4, out of n - #classes = 2: subtree 1/2.
  // Leave-one-out: 0 <- leaf 1 (A) right; 1 <- leaf 0 (A) right; 2 <- node 4 {A,A} wrong;
  // 3 <- node 5 {A,A,B} majority A right: 3/4.
  const TreeScores scores = score_tree(kCaterpillar, make_labels({0, 0, 1, 0}));
  EXPECT_DOUBLE_EQ(scores.dendrogram_purity, 5.0 / 6.0);
  EXPECT_DOUBLE_EQ(scores.subtree_score, 0.5);
  EXPECT_DOUBLE_EQ(scores.leave_one_out_accuracy, 0.75);
}

TEST(Scores, LeaveOneOutTiesGoToTheSmallestClass) {
  // ((0,1),2): leaf 2's sibling holds one leaf of class 1 and one of class 0: predicts 0.
  const MergeTree tree{3, {{0, 1, 1.0}, {3, 2, 2.0}}};
  // Leaves 0 and 1 predict each other's (different) class: wrong. Leaf 2 (class 0): right.
  EXPECT_DOUBLE_EQ(score_tree(tree, make_labels({1, 0, 0})).leave_one_out_accuracy, 1.0 / 3.0);
  // Leaf 2 of class 1 is predicted 0: wrong.
  EXPECT_DOUBLE_EQ(score_tree(tree, make_labels({1, 0, 1})).leave_one_out_accuracy, 0.0);
}

TEST(Scores, DegenerateLabelings) {
  // Every leaf its own class: no same-class pair and no node could be pure.
  const TreeScores singletons = score_tree(kBalanced, make_labels({0, 1, 2, 3}));
  EXPECT_DOUBLE_EQ(singletons.dendrogram_purity, 1.0);
  EXPECT_DOUBLE_EQ(singletons.subtree_score, 1.0);
  EXPECT_DOUBLE_EQ(singletons.leave_one_out_accuracy, 0.0);
  // One class: every node pure, every prediction right.
  const TreeScores one_class = score_tree(kCaterpillar, make_labels({0, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(one_class.dendrogram_purity, 1.0);
  EXPECT_DOUBLE_EQ(one_class.subtree_score, 1.0);
  EXPECT_DOUBLE_EQ(one_class.leave_one_out_accuracy, 1.0);
  const TreeScores single_leaf = score_tree(MergeTree{1, {}}, make_labels({0}));
  EXPECT_DOUBLE_EQ(single_leaf.leave_one_out_accuracy, 1.0);
}

TEST(Scores, RejectsMismatchedLabelsAndIncompleteTrees) {
  EXPECT_THROW(score_tree(kBalanced, make_labels({0, 0, 1})), InputError);
  EXPECT_THROW(score_tree(MergeTree{4, {{0, 1, 1.0}}}, make_labels({0, 0, 1, 1})), Error);
  EXPECT_THROW(score_tree(MergeTree{3, {{0, 1, 2.0}, {3, 2, 1.0}}}, make_labels({0, 0, 1})), Error);
}

// Straight from the definitions, O(n^2) with explicit leaf sets.
TreeScores brute_force_scores(const MergeTree& tree, const std::vector<std::size_t>& cls) {
  const std::size_t n = tree.leaf_count;
  std::vector<std::vector<std::size_t>> leaves(tree.node_count());
  std::vector<std::size_t> parent(tree.node_count(), 0);
  for (std::size_t i = 0; i < n; ++i) leaves[i] = {i};
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const Merge& m = tree.merges[i];
    leaves[n + i] = leaves[m.left];
    leaves[n + i].insert(leaves[n + i].end(), leaves[m.right].begin(), leaves[m.right].end());
    parent[m.left] = parent[m.right] = n + i;
  }
  auto fraction = [&](std::size_t node, std::size_t c) {
    const auto& members = leaves[node];
    const auto hits = std::count_if(members.begin(), members.end(),
                                    [&](std::size_t leaf) { return cls[leaf] == c; });
    return static_cast<double>(hits) / static_cast<double>(members.size());
  };
  TreeScores s;
  double purity_sum = 0.0;
  std::size_t pairs = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      if (cls[i] != cls[j]) continue;
      ++pairs;
      // The smallest node holding both: the first merge (in height order) containing both.
      for (std::size_t v = n; v < tree.node_count(); ++v) {
        const auto& members = leaves[v];
        if (std::find(members.begin(), members.end(), i) != members.end() &&
            std::find(members.begin(), members.end(), j) != members.end()) {
          purity_sum += fraction(v, cls[i]);
          break;
        }
      }
    }
  }
  s.dendrogram_purity = pairs > 0 ? purity_sum / static_cast<double>(pairs) : 1.0;
  std::size_t pure = 0;
  for (std::size_t v = n; v < tree.node_count(); ++v) {
    if (fraction(v, cls[leaves[v][0]]) == 1.0) ++pure;
  }
  const std::size_t classes = std::set<std::size_t>(cls.begin(), cls.end()).size();
  s.subtree_score =
      n > classes ? static_cast<double>(pure) / static_cast<double>(n - classes) : 1.0;
  std::size_t correct = 0;
  for (std::size_t leaf = 0; leaf < n; ++leaf) {
    const Merge& m = tree.merges[parent[leaf] - n];
    const std::size_t sibling = m.left == leaf ? m.right : m.left;
    std::map<std::size_t, std::size_t> counts;
    for (const std::size_t other : leaves[sibling]) ++counts[cls[other]];
    std::size_t best = 0;
    std::size_t best_count = 0;
    for (const auto& [c, count] : counts) {  // ascending class: strict > keeps the smallest
      if (count > best_count) {
        best = c;
        best_count = count;
      }
    }
    if (best == cls[leaf]) ++correct;
  }
  s.leave_one_out_accuracy = static_cast<double>(correct) / static_cast<double>(n);
  return s;
}

TEST(Scores, MatchBruteForceOnRandomTrees) {
  std::mt19937_64 rng(2024);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(2, 60)(rng);
    const std::size_t classes = std::uniform_int_distribution<std::size_t>(1, 6)(rng);
    MergeTree tree;
    tree.leaf_count = n;
    std::vector<std::size_t> live(n);
    for (std::size_t i = 0; i < n; ++i) live[i] = i;
    for (std::size_t i = 0; i + 1 < n; ++i) {
      std::shuffle(live.begin(), live.end(), rng);
      const std::size_t left = live.back();
      live.pop_back();
      const std::size_t right = live.back();
      live.back() = n + i;
      tree.merges.push_back(Merge{left, right, static_cast<double>(i)});
    }
    std::vector<std::size_t> cls(n);
    // Sparse class indices (multiples of 7) check that indices need not be dense.
    for (auto& c : cls) c = 7 * std::uniform_int_distribution<std::size_t>(0, classes - 1)(rng);
    Labels labels;
    labels.class_of = cls;
    const TreeScores fast = score_tree(tree, labels);
    const TreeScores slow = brute_force_scores(tree, cls);
    ASSERT_NEAR(fast.dendrogram_purity, slow.dendrogram_purity, 1e-12) << "trial " << trial;
    ASSERT_DOUBLE_EQ(fast.subtree_score, slow.subtree_score) << "trial " << trial;
    ASSERT_DOUBLE_EQ(fast.leave_one_out_accuracy, slow.leave_one_out_accuracy) << "trial " << trial;
  }
}

}  // namespace
}  // namespace kingman
