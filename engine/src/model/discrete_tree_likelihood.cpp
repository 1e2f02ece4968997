#include "kingman/model/discrete_tree_likelihood.hpp"

#include <cmath>
#include <string>

#include "kingman/error.hpp"
#include "kingman/model/coalescent_prior.hpp"
#include "kingman/model/discrete_messages.hpp"

namespace kingman {

TreeDensity tree_density(const DiscreteData& data, const MergeTree& tree) {
  validate(tree);
  if (tree.leaf_count != data.n) {
    throw Error("tree_density: the tree has " + std::to_string(tree.leaf_count) +
                " leaves but the data has " + std::to_string(data.n) + " rows");
  }
  DiscreteMessages messages(data);
  // Node id -> message slot. A merge stores its result in the left child's slot.
  std::vector<std::size_t> slot_of(tree.node_count());
  for (std::size_t i = 0; i < tree.leaf_count; ++i) slot_of[i] = i;
  TreeDensity density;
  density.log_likelihood = data.log_base_term();
  double previous_time = 0.0;
  for (std::size_t k = 0; k < tree.merges.size(); ++k) {
    const Merge& merge = tree.merges[k];
    const double t = -merge.height;
    density.log_prior -= coalescent_rate(tree.leaf_count - k) * (previous_time - t);
    const std::size_t l = slot_of[merge.left];
    const std::size_t r = slot_of[merge.right];
    const double log_z = messages.merge(l, r, t, l);
    if (std::isnan(log_z)) {
      throw NumericalError("merge " + std::to_string(k) + " of nodes " +
                           std::to_string(merge.left) + " and " + std::to_string(merge.right) +
                           " has an undefined likelihood");
    }
    density.log_likelihood += log_z;
    slot_of[tree.leaf_count + k] = l;
    previous_time = t;
  }
  return density;
}

}  // namespace kingman
