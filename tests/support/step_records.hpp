#pragma once
// What a particle system keeps for the particles it steps, for SMC particles that a test steps
// by hand: the merge records (a system's HistoryPool) and MPost2's leaf row sums of each state
// built (a system's per-step buffers), kept to the test's end at stable addresses.
#include <deque>

#include "../../engine/src/inference/smc/pair_cache.hpp"
#include "../../engine/src/inference/smc/particle_state.hpp"

namespace kingman::testing_support {

class StepRecords {
 public:
  // A node for one particle's merge (draw_and_merge's `recorded`).
  detail::HistoryNode& merge() { return merges_.emplace_back(); }
  // Storage for one state's leaf row sums (PairCandidates::leaf_sums).
  detail::LeafRowSums* leaf_sums() { return &leaf_sums_.emplace_back(); }

 private:
  std::deque<detail::HistoryNode> merges_;
  std::deque<detail::LeafRowSums> leaf_sums_;
};

}  // namespace kingman::testing_support
