#pragma once
// A particle's partial history under the binary / multinomial model (live_particle_state.hpp):
// clusters are immutable nodes holding their d x K messages.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kingman/model/discrete_data.hpp"
#include "kingman/model/discrete_messages.hpp"
#include "live_particle_state.hpp"

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

using DiscreteParticleState = LiveParticleState<DiscreteClusterNode>;

// The n leaves of the data, shared by every particle, into `leaves` (data.n nodes, in place:
// the cluster pool's block).
void fill_discrete_leaves(const DiscreteData& data, std::span<DiscreteClusterNode> leaves);

}  // namespace kingman::detail
