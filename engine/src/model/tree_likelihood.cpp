#include "kingman/model/tree_likelihood.hpp"

#include <cmath>
#include <string>

#include "kingman/error.hpp"
#include "kingman/model/brownian_messages.hpp"
#include "kingman/model/coalescent_prior.hpp"

namespace kingman {

TreeDensity tree_density(const WhitenedData& data, double leaf_variance, const MergeTree& tree) {
  validate(tree);
  BrownianMessages messages(data, leaf_variance);
  // Node id -> message slot. A merge stores its result in the left child's slot.
  std::vector<std::size_t> slot_of(tree.node_count());
  for (std::size_t i = 0; i < tree.leaf_count; ++i) slot_of[i] = i;
  TreeDensity density;
  double previous_time = 0.0;
  for (std::size_t k = 0; k < tree.merges.size(); ++k) {
    const Merge& merge = tree.merges[k];
    const double t = -merge.height;
    const std::size_t live = tree.leaf_count - k;
    density.log_prior -= coalescent_rate(live) * (previous_time - t);
    const std::size_t l = slot_of[merge.left];
    const std::size_t r = slot_of[merge.right];
    const double log_z = messages.merge(l, r, t, l);
    if (std::isnan(log_z) || log_z == std::numeric_limits<double>::infinity()) {
      throw NumericalError("merge " + std::to_string(k) + " of nodes " +
                           std::to_string(merge.left) + " and " + std::to_string(merge.right) +
                           " has an infinite or undefined likelihood (identical points merged "
                           "at height 0 with leaf variance 0?)");
    }
    density.log_likelihood += log_z;
    slot_of[tree.leaf_count + k] = l;
    previous_time = t;
  }
  return density;
}

}  // namespace kingman
