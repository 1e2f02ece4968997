// kingman score: scores of any linkage (kingman's or another tool's) against class labels.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "kingman/data/labels.hpp"
#include "kingman/tree/linkage.hpp"
#include "kingman/tree/scores.hpp"

namespace kingman::cli {

Action add_score_command(CLI::App& app) {
  auto linkage = std::make_shared<std::string>();
  auto labels = std::make_shared<std::string>();
  CLI::App* score = app.add_subcommand(
      "score", "Dendrogram purity, subtree score and leave-one-out accuracy of a linkage");
  score->add_option("--linkage", *linkage, "scipy-format linkage CSV (a,b,height,size)")
      ->required();
  score->add_option("--labels", *labels, "one class label per leaf")->required();
  return [linkage, labels] {
    const MergeTree tree = read_linkage_csv(*linkage);
    const TreeScores s = score_tree(tree, read_labels(*labels, tree.leaf_count));
    std::cout << fmt::format(
        "{{\"dendrogram_purity\":{},\"subtree_score\":{},\"leave_one_out_accuracy\":{}}}\n",
        s.dendrogram_purity, s.subtree_score, s.leave_one_out_accuracy);
  };
}

}  // namespace kingman::cli
