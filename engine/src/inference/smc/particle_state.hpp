#pragma once
// A particle's partial history as persistent, shared structures: resampled copies share their
// clusters (messages and pair rows; owned by the system's ClusterPool, cluster_pool.hpp) and
// their merge list (owned by its HistoryPool, history_pool.hpp) instead of copying them, so
// copying a particle costs O(live clusters) plain pointer copies.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kingman/model/whitened_data.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman::detail {

// One cluster's message (MODEL.md section 3), immutable once built.
struct ClusterNode {
  virtual ~ClusterNode() = default;  // MPost2's clusters extend it (pair_cache.hpp)
  std::size_t id = 0;                // node id (scipy convention)
  double variance = 0.0;             // v (times Lambda)
  double time = 0.0;                 // t <= 0
  std::vector<double> mean;          // whitened y^
  // For internal clusters: per node id of an earlier cluster, the pair's squared distance;
  // entries of clusters that were not live when this one was created are never read. MPost2's
  // clusters leave it empty and keep pair weights instead (Mpost2ClusterNode, pair_cache.hpp).
  std::vector<double> eps_row;
  // The race (race.cpp): key of the random streams of the pair clocks this cluster created,
  // unique to the particle and step that created it, so copies of a particle share them.
  std::uint64_t clock_key = 0;
  mutable std::uint64_t collect_mark = 0;  // ClusterPool's
  // StepPairTails' (step_pair_tails.hpp): the step stamp of its index, and the index.
  mutable std::uint64_t tails_stamp = 0;
  mutable std::uint32_t tails_index = 0;

  double offset() const { return variance + time; }  // a_c in r_C = a_l + a_r - 2T
};

// One merge of a particle's history, and the history before it (null before the first merge).
// Owned by the system's HistoryPool (history_pool.hpp), which fills in nothing but the mark.
struct HistoryNode {
  Merge merge;
  const HistoryNode* previous = nullptr;
  mutable std::uint64_t collect_mark = 0;  // HistoryPool's
};

// Records `merge` in `node` (a HistoryPool's, handed out for this step) after `history`, and
// makes it the history.
inline void append_merge(const HistoryNode*& history, HistoryNode& node, const Merge& merge) {
  node.merge = merge;
  node.previous = history;
  history = &node;
}

struct LeafRowSums;  // MPost2's (pair_cache.hpp)

struct ParticleState {
  std::vector<const ClusterNode*> live;  // in a fixed, history-determined order
  const HistoryNode* history = nullptr;  // the last merge (HistoryPool's)
  double time = 0.0;                     // time of the last merge (T)
  // MPost2: the leaf parts of the row sums of the state before the last merge (null for the
  // first state), by that state's live positions, shared by the copies of that state; the next
  // step derives this state's from them. The last merge put the merged cluster at position
  // merged_at of that state's list and erased its position erased_at (merged_at < erased_at).
  // Owned by the system, which keeps a step's sums until the step after it has read them.
  const LeafRowSums* leaf_sums = nullptr;
  std::size_t merged_at = 0, erased_at = 0;
};

// The data's leaves, with observation noise leaf_variance, into `leaves` (data.n nodes, in
// place: the cluster pool's block).
void fill_leaves(const WhitenedData& data, double leaf_variance, std::span<ClusterNode> leaves);

// The complete merge list of a finished particle.
MergeTree to_merge_tree(const ParticleState& state, std::size_t leaf_count);

}  // namespace kingman::detail
