#pragma once
// A particle's partial history under the binary / multinomial model, as persistent shared
// structures (like particle_state.hpp for the Brownian model): clusters are immutable nodes
// holding their d x K messages, owned by the system's ClusterPool (cluster_pool.hpp); the merge
// list is a shared linked list; so a resampled copy of a particle costs O(live clusters) plain
// pointer copies.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kingman/model/discrete_data.hpp"
#include "kingman/model/discrete_messages.hpp"
#include "particle_state.hpp"

namespace kingman::detail {

// One cluster of the model (MODEL.md section 7), immutable once built.
struct DiscreteClusterNode {
  std::size_t id = 0;                   // node id (scipy convention)
  double time = 0.0;                    // t <= 0
  std::vector<double> message;          // d * K: M^d of column d at d * K
  std::vector<unsigned char> observed;  // d: whether any leaf below observes the column
  // The race (race_engine.hpp): key of the random streams of the pair clocks this cluster
  // created, unique to the particle and step that created it.
  std::uint64_t clock_key = 0;
  mutable std::uint64_t collect_mark = 0;  // ClusterPool's

  DiscreteClusterView view() const { return {message.data(), observed.data(), time}; }
};

struct DiscreteParticleState {
  std::vector<const DiscreteClusterNode*> live;  // history-determined order
  std::shared_ptr<const HistoryNode> history;    // the last merge
  double time = 0.0;                             // time of the last merge (T)
};

// The n leaves of the data, shared by every particle.
std::vector<std::unique_ptr<DiscreteClusterNode>> discrete_leaves(const DiscreteData& data);

// Merges the live clusters at positions x < y of `state` at time t <= state.time as node
// `id`: the new cluster replaces position x, position y is removed, the merge is appended to the
// history; the new cluster is handed over in `created` for the caller's ClusterPool. Returns
// log Z of the merge (-inf for an impossible one).
double merge_live_pair(const DiscreteData& data, DiscreteParticleState& state, std::size_t x,
                       std::size_t y, double t, std::size_t id,
                       std::unique_ptr<DiscreteClusterNode>& created);

// The merge list of a particle (complete once n - 1 merges are done).
MergeTree discrete_merge_tree(const DiscreteParticleState& state, std::size_t leaf_count);

}  // namespace kingman::detail
