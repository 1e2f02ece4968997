#include "pair_cache.hpp"
#include "../../scheduler/parallel_for.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kingman::detail {

LeafPairCache::LeafPairCache(const WhitenedData& data, bool with_bessel_terms)
    : n_(data.n), shape_(1.0 - 0.5 * static_cast<double>(data.d)) {
  const std::size_t d = data.d;
  eps_.resize(n_ * (n_ - 1) / 2);
  // Rows are independent, so the parallel split cannot change any value.
  parallel_for_range(0, n_, [&](const auto& rows) {
    for (std::size_t i = rows.begin(); i != rows.end(); ++i) {
      const double* xi = data.row(i);
      for (std::size_t j = i + 1; j < n_; ++j) {
        const double* xj = data.row(j);
        double sum = 0.0;
        for (std::size_t c = 0; c < d; ++c) sum += (xi[c] - xj[c]) * (xi[c] - xj[c]);
        eps_[condensed_index(n_, i, j)] = sum;
      }
    }
  });
  if (!with_bessel_terms) return;
  // Merged clusters' means are convex combinations of leaves, so their distances never exceed
  // the largest leaf distance; smaller ones are common, and the fit reaches far below.
  double smallest = std::numeric_limits<double>::infinity(), largest = 0.0;
  for (double e : eps_)
    if (e > 0.0) {
      smallest = std::min(smallest, e);
      largest = std::max(largest, e);
    }
  if (largest > 0.0) bessel_.emplace(shape_, smallest * 1e-6, largest * 1.0001 + 1e-300);
  log_bessel_.resize(eps_.size());
  parallel_for_range(0, eps_.size(), [&](const auto& range) {
    for (std::size_t k = range.begin(); k != range.end(); ++k)
      log_bessel_[k] = mpost2_term(eps_[k]);
  });
}

MergeTree to_merge_tree(const ParticleState& state, std::size_t leaf_count) {
  MergeTree tree;
  tree.leaf_count = leaf_count;
  for (const HistoryNode* node = state.history.get(); node; node = node->previous.get())
    tree.merges.push_back(node->merge);
  std::reverse(tree.merges.begin(), tree.merges.end());
  return tree;
}

}  // namespace kingman::detail
