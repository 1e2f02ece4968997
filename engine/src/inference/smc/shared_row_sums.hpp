#pragma once
// MPost2's row sums, shared by the states of one step (proposals.cpp uses them with leaf sums,
// for the merged partners' part of each row). Within a step every state has the same lambda,
// and a cluster's factor is f_y = h_y * c(state) with
//   h_y = exp(sigma_y + lambda a_y / 2 - Phi)   (the cluster's own, the same in every state)
//   c   = exp(Phi - lambda T / 2 - shift)       (the state's: T its time, shift its largest
//                                                exponent)
// The states of a step descend from one latest common ancestor, D steps back, whose clusters
// (node ids below J = n + step - D) are the same objects in every state. Those of them that no
// lineage has merged since are live in every state; call the rest "contested". Then row z's sum
// over the partners below J splits into
//   c * P_z                    with P_z = sum over the uncontested partners of E_zy h_y, which
//                              depends on the cluster z and the step only, so it is computed
//                              once per cluster and step however many states list z, and
//   sum over the contested partners that this state still has of E_zy f_y,
// plus the partners created since the ancestor (ids J and up), summed directly. Resampling
// leaves few ancestors (at n = 2000 with 16 particles the ancestor is a median of 2 steps back,
// and the 8 states of a step list 6.5 times as many merged clusters as are distinct), so most of
// each row is summed once per step instead of once per state. The result is the row sum up to
// rounding; it only chooses the owner of the pair (proposals.hpp: the chosen row's exact sum
// enters q(C)), so the weights stay exact.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "pair_cache.hpp"
#include "particle_state.hpp"

namespace kingman::detail {

// When sharing pays: where a state's rows are long against what each state still sums itself
// per row, the contested and recent partners and a fixed cost (the row's call and cache
// misses). A row of the shared prefix has on average half its length there; the prefix must be
// prefix_share times (remainder + row_cost). Measured at n = 400 and 2000 (bench/RESULTS.md):
// with 4 and 0, n = 400 ran 3 % slower than without sharing.
struct SharingRule {
  std::size_t prefix_share = 8;
  std::size_t row_cost = 16;
};

class SharedRowSums {
 public:
  // Prepares the step's shared part for `states` (one per group; their live clusters' rows
  // complete, except each state's newest), or returns false where sharing would not pay (one
  // state, or a common ancestor so far back that the per-state remainder is most of each row).
  // Rows are summed from node id `first_id` on (n: the merged partners). `stamp` must differ
  // between the steps of a run (it keys the clusters' cached P_z).
  bool prepare(std::span<const ParticleState* const> states, const LeafPairCache& cache,
               std::size_t first_id, double lambda, std::uint64_t stamp,
               const SharingRule& rule = {});

  // Computes P_z ahead, in parallel, for the merged clusters of `live` (the first state's list,
  // which holds every cluster that all states list) whose rows are complete: left to the group
  // tasks, the states that happened to need them first did most of that work, and the threads'
  // tasks came out uneven.
  void compute_common_parts(std::span<const ClusterNode* const> live) const;

  // One state's view: its scale c and the contested partners it still lists, with their
  // factors (most of the contested clusters are merged in most lineages).
  class StateView {
   public:
    // For a state at time T whose factors are exp(exponent - shift), `factor` by node id (0 for
    // clusters it does not list).
    void assign(const SharedRowSums& shared, double lambda, double time, double shift,
                const double* factor);
    // Row z's sum from first_id on, sum_y E_zy f_y. Thread-safe: P_z is computed by whichever
    // task needs it first (the value does not depend on which), and kept in the cluster for
    // the other states of the step.
    double row_sum(const Mpost2ClusterNode& z) const;

   private:
    const SharedRowSums* shared_ = nullptr;
    const double* factor_ = nullptr;
    double scale_ = 0.0;                   // c
    std::vector<std::size_t> listed_ids_;  // contested partners still listed, increasing
    std::vector<double> listed_factors_;
  };

 private:
  double common_part(const Mpost2ClusterNode& z) const;

  std::uint64_t stamp_ = 0;
  std::size_t first_id_ = 0;
  std::size_t first_recent_ = 0;  // J
  double log_scale_ = 0.0;        // Phi
  std::vector<double> common_;    // h_y by node id - first_id over [first_id, J); 0 if contested
  std::vector<std::size_t> contested_;    // node ids, increasing
  std::vector<std::uint64_t> marks_;      // by node id: stamp_ where contested
  std::vector<const HistoryNode*> walk_;  // the states' histories, stepped back together
  std::vector<std::size_t> listed_;       // prepare's scratch: positions in common_
  std::vector<double> exponents_;         // and their exponents
};

}  // namespace kingman::detail
