#pragma once
// One SMC step for one particle, in two phases. build_candidates lists the live pairs of a state
// and, for proposals whose pair scores involve no random draw (PostPost, MPost1, MPost2),
// their cumulative proposal weights: particles that are resampled copies of one state share
// this O(m^2) work. draw_and_merge then draws the particle's own merge from the proposal,
// applies it, and returns the log incremental weight (target over proposal, MODEL.md
// section 5).
#include <memory>
#include <utility>
#include <vector>

#include "kingman/kernels/gig_quick_sampler.hpp"
#include "kingman/kernels/rng.hpp"
#include "kingman/options.hpp"
#include "pair_cache.hpp"
#include "pair_numbering.hpp"
#include "particle_state.hpp"
#include "shared_row_sums.hpp"
#include "step_pair_tails.hpp"

namespace kingman::detail {

struct StepContext {
  Algorithm proposal;
  std::size_t leaf_count;  // n
  std::size_t dims;        // d
  double log_det_lambda;   // log |Lambda|
  const LeafPairCache* cache;
  // MPost2 with leaf sums: the merged partners' row sums shared by this step's states, or null
  // (each state sums its rows itself).
  const SharedRowSums* shared_row_sums = nullptr;
  // PostPost and MPost1: the pair kernels shared by this step's states, or null (each state
  // computes its own).
  const StepPairTails* pair_tails = nullptr;
  // PostPost: pairs whose masses cannot matter left out by an upper bound on each mass
  // (SmcOptions::skip_negligible_pairs).
  bool skip_negligible_pairs = true;
};

// Weights of a discrete proposal, with per-block sums for drawing in O(P / kBlock + kBlock).
inline constexpr long kBlock = 64;
struct ProposalWeights {
  std::vector<double> weights;     // exp(log_score - max_score)
  std::vector<double> block_sums;  // sums of consecutive kBlock weights
  double total = 0.0;              // sum of the block sums, in order
};

// MPost2's scores in factored form (pair_cache.hpp): the weight of pair C = {z, y} is
// E_C * f_z * f_y, with E_C in the row of its owner z (the member with the higher node id) and
// one factor f per live cluster, f = exp(sigma + lambda (a - T) / 2 - Phi), Phi the largest
// exponent, so every factor is at most 1. A pair is drawn in two stages: an owner z with
// probability f_z S~_z / total, then a partner y in z's row with probability E_zy f_y / S_z,
// S_z = sum_y E_zy f_y. With dense row sums (Mpost2RowSums) S~ is S itself. With leaf sums S~_z
// is the leaf part as the LeafRowSums give it (equal to S_z's up to rounding and the
// subtractions' error, below k 2^-33 relative after k subtractions) plus the merged partners'
// part, summed by the state or partly shared by the step's states (shared_row_sums.hpp; equal
// to the state's own sum up to rounding), and S_z is computed for the chosen row only. Either
// way q(C) is the product of the two stages' probabilities, so the weight G_C / q(C) is exact
// whatever the error of S~.
struct FactoredScores {
  std::vector<double> factor;         // by node id: f, or 0 for clusters that are not live
  std::vector<std::size_t> position;  // by node id: live position (live clusters only)
  std::vector<double> row_sum;        // by live position z: S~_z
  std::vector<double> owner_weight;   // by live position z: f_z * S~_z
  double total = 0.0;                 // sum of owner_weight, in live order
  bool exact_row_sums = true;         // S~ = S (dense row sums)
};

// Pairs are the live positions (x < y) in lexicographic order.
struct PairCandidates {
  std::vector<double> offset, eps;  // PriorPrior, PriorPost: r_C and eps_C of each pair
  // PostPost, MPost1, and MPost2 when its factored form cannot be used (proposals.cpp):
  std::vector<double> log_score;  // log proposal score of each pair
  ProposalWeights weights;        // their weights
  double log_total = 0.0;         // log sum_C exp(log_score)
  // MPost2: whether `factored` holds this state's scores (otherwise log_score does).
  bool is_factored = false;
  FactoredScores factored;
  // MPost2 with leaf sums (LeafPairCache::uses_leaf_sums): where build_candidates writes this
  // state's leaf row sums, which every particle that draws from it then points to. The caller's
  // storage: neither the parent's sums (state.leaf_sums) nor another state's of this step, kept
  // until the next step's candidates are built.
  LeafRowSums* leaf_sums = nullptr;
};

// Fills `merged` (a fresh or spare node; its other fields are reset) with the message of a and b
// merged at time t (MODEL.md section 3): node id `id`, time t, variance and mean.
void merge_clusters(const ClusterNode& a, const ClusterNode& b, double t, std::size_t id,
                    std::size_t dims, ClusterNode& merged);

// PriorPrior's incremental weight for a pair at squared distance eps with r_C = offset merged
// after `duration`: log Z_C(delta) = log N(eps; 0, (r_C + 2 delta) Lambda).
double log_pair_likelihood(const StepContext& context, double eps, double offset, double duration);

// What earlier particles of the same state already computed for a chosen pair: its exact mass
// and its truncated-GIG sampler (the closed-form envelope of gig_quick_sampler.hpp: exact draws,
// and cheaper to build than the reference sampler's root solves) depend only on (state, pair),
// so particles that are copies of one state and pick the same pair reuse them. One cache serves one
// sequence of particles that share a state; clear it before the next state.
class ChosenPairCache {
 public:
  struct Entry {
    std::size_t index;
    double log_mass;
    kernels::QuickTruncatedGigSampler sampler;
  };
  const Entry* find(std::size_t index) const {
    for (const Entry& e : entries_)
      if (e.index == index) return &e;
    return nullptr;
  }
  const Entry& add(Entry entry) { return entries_.emplace_back(std::move(entry)); }
  void clear() { entries_.clear(); }

 private:
  std::vector<Entry> entries_;
};

// Fills `candidates` for `state` (all proposals) and its scores (PostPost, MPost1, MPost2).
void build_candidates(const ParticleState& state, const StepContext& context,
                      PairCandidates& candidates);

// Extends `state` by merge number `step` (0-based) and returns log alpha. `candidates` must
// have been built from a state identical to `state`. `created` may hold a spare node of this
// run's kind (ClusterPool::take_spare; stale values are overwritten) for the merged cluster;
// the merged cluster, which `state` now lists, is handed back in it for the caller's pool. The
// merge is recorded in `recorded` (the particle's node of this step, HistoryPool::node).
double draw_and_merge(ParticleState& state, const PairCandidates& candidates, std::size_t step,
                      const StepContext& context, kernels::RandomStream& stream,
                      ChosenPairCache& chosen_pairs, std::unique_ptr<ClusterNode>& created,
                      HistoryNode& recorded);
// The same draw from `state`, with the extended state written to `next` (which may be `state`):
// a resampled copy of `state` that has not taken its state yet takes it here, with the merge
// applied, for the price of one copy (instead of a copy, then a shift of the live list).
double draw_and_merge(const ParticleState& state, ParticleState& next,
                      const PairCandidates& candidates, std::size_t step,
                      const StepContext& context, kernels::RandomStream& stream,
                      ChosenPairCache& chosen_pairs, std::unique_ptr<ClusterNode>& created,
                      HistoryNode& recorded);

}  // namespace kingman::detail
