#pragma once
// A particle's partial history for the models whose clusters are immutable nodes of one type
// (the binary / multinomial model, and the Brownian model with per-dimension messages), as
// persistent shared structures like particle_state.hpp's: nodes are owned by the system's
// ClusterPool (cluster_pool.hpp), the merge list is a shared linked list owned by its
// HistoryPool (history_pool.hpp), so a resampled copy of a particle costs O(live clusters)
// plain pointer copies.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "kingman/tree/merge_tree.hpp"
#include "particle_state.hpp"

namespace kingman::detail {

template <class Node>
struct LiveParticleState {
  std::vector<const Node*> live;         // history-determined order
  const HistoryNode* history = nullptr;  // the last merge (HistoryPool's)
  double time = 0.0;                     // time of the last merge (T)
};

// Replaces the live clusters at positions x < y of `state` by `merged` (made at time t, node id
// merged->id) at position x, appends the merge to the history in `recorded` (the particle's
// node of this step, HistoryPool::node), and hands the cluster over in `created` for the
// caller's ClusterPool.
template <class Node>
void record_merge(LiveParticleState<Node>& state, std::size_t x, std::size_t y,
                  std::unique_ptr<Node> merged, std::unique_ptr<Node>& created,
                  HistoryNode& recorded) {
  const Node& a = *state.live[x];
  const Node& b = *state.live[y];
  append_merge(state.history, recorded,
               Merge{std::min(a.id, b.id), std::max(a.id, b.id), -merged->time});
  state.time = merged->time;
  state.live[x] = merged.get();
  state.live.erase(state.live.begin() + static_cast<std::ptrdiff_t>(y));
  created = std::move(merged);
}

// The merge list of a particle (complete once n - 1 merges are done): any state with a
// `history` list (also particle_state.hpp's and PriorPrior's, prior_prior.cpp).
template <class State>
MergeTree live_merge_tree(const State& state, std::size_t leaf_count) {
  MergeTree tree;
  tree.leaf_count = leaf_count;
  // At most n - 1 merges: one allocation (growing by doubling cost a run of MPost2 at n = 64
  // with 100 particles 1 % of its time, on one thread while the others wait).
  tree.merges.reserve(leaf_count > 0 ? leaf_count - 1 : 0);
  for (const HistoryNode* node = state.history; node; node = node->previous)
    tree.merges.push_back(node->merge);
  std::reverse(tree.merges.begin(), tree.merges.end());
  return tree;
}

}  // namespace kingman::detail
