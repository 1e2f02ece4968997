#pragma once
// Pair quantities shared by all particles: the leaf-pair squared distances (and MPost2's
// per-pair weights), computed once; pairs involving a merged cluster are read from that
// cluster's own row.
//
// MPost2's pair score (Henao & Lucas eq. 13) is L_C + lambda r_C / 2 with L_C the Bessel term
// below, fixed per pair, and r_C = (a_l - T) + (a_r - T) (MODEL.md section 3.2), so
//   exp(score_C) = exp(L_C - sigma_l - sigma_r) * exp(sigma_l + lambda (a_l - T) / 2)
//                                                * exp(sigma_r + lambda (a_r - T) / 2)
// for any per-cluster scales sigma. The first factor, the pair weight E_C, is stored once per
// pair; the other two are one exp per live cluster and step. Each cluster's sigma is chosen when
// it is created so that E_C <= 1 for every pair it stores (no overflow), with equality for its
// best partner; the proposal's handling of E_C that underflow is in proposals.cpp.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "../../memory/large_array.hpp"
#include "kingman/kernels/fixed_order_bessel.hpp"
#include "kingman/kernels/log_bessel_k.hpp"
#include "kingman/kernels/pair_kernels.hpp"

#include "kingman/model/whitened_data.hpp"
#include "kingman/options.hpp"
#include "particle_state.hpp"

namespace kingman::detail {

// A cluster merged under MPost2: its pair weights E_C against every earlier node id (0 for
// clusters that were not live when it was created, so rows can be summed without a mask) and
// its scale sigma, filled in by proposals.cpp (complete_pair_weights) when its state first
// survives a step. It keeps no distance row (LeafPairCache::eps recomputes the rare ones needed).
struct Mpost2ClusterNode : ClusterNode {
  std::vector<double> pair_weight_row;
  double weight_scale = 0.0;
  // SharedRowSums' part of this cluster's row sum for the step stamped `shared_stamp`, read and
  // written through std::atomic_ref (tasks of one step may compute it at the same time).
  mutable std::uint64_t shared_stamp = 0;
  mutable double shared_part = 0.0;
};

// MPost2's row sums, leaf part (proposals.cpp): for a state and each of its live clusters z,
//   sum over the live leaves y < z of E_zy e^{sigma_y}  =  e^{tau_z} * scaled_z,
// by the state's live positions (2m doubles to derive from the parent's per state; by node id
// they were 4n, and their copying was 6 % of MPost2 at n = 1000). Leaves share one offset a = v, so
// their factors f_y are e^{sigma_y} times one number per state: the leaf part of z's row sum is
// that number times the sum above, which changes only when leaves merge. The next state's sums are
// this state's less the one or two merged leaves' terms: O(m) per step instead of a pass over every
// stored weight of every row. When a sum is computed in full, tau_z is the log of the sum and
// scaled_z = 1; subtractions then lower scaled_z, and one below 2^-20 triggers that full pass again
// (proposals.cpp).
struct LeafRowSums {
  std::vector<double> tau, scaled;  // by live position
};

// A sum computed in full from the logs of its terms (-inf for terms left out; `logs` is
// overwritten): tau = log of the sum and scaled = 1, or tau = 0 and scaled = 0 for an empty sum.
void sum_from_logs(double* logs, std::size_t count, double& tau, double& scaled);

// Stored pair weights below this are stored as 0: a denormal would only slow the sums down, and
// such a pair's proposal probability is below it (every other factor is at most 1).
inline constexpr double kSmallestPairWeight = std::numeric_limits<double>::min();

// MPost2's row sums (Mpost2RowSums, options.hpp; proposals.cpp): a pass over every stored
// weight of every live row per state (dense: O(m n), one streaming dot product per row), or the
// leaf parts carried from state to state (LeafRowSums: O(m) updates and a pass over the merged
// partners only, with bookkeeping that costs more than the dense pass until n is a few
// hundred). `automatic` takes leaf sums from kMpost2LeafSumsFromPoints (options.hpp) points on.
// Measured on d = 20, 64 particles (bench/RESULTS.md): leaf sums 13-17 % slower at n = 128 and
// 200, 16 % faster at n = 400.

// What a LeafPairCache computes up front: nothing (PriorPrior reads one distance per particle
// and step, O(n) per particle in all, which it computes from the two means: the table would
// cost O(n^2 d) time and n^2 / 2 doubles, and at n = 2400 its random reads missed the cache
// more than the means do), the leaf pairs' squared distances, or those and MPost2's pair weights.
enum class LeafPairs { on_demand, distances, mpost2_weights };

class LeafPairCache {
 public:
  LeafPairCache(const WhitenedData& data, LeafPairs contents,
                Mpost2RowSums row_sums = Mpost2RowSums::automatic);

  std::size_t leaf_count() const { return n_; }

  // MPost2's pair score without lambda (Henao & Lucas eq. 13): log(eps^{p/2} K_p(sqrt eps)),
  // p = 1 - d/2, from a per-run fit of that fixed-order term.
  // Identical points (eps = 0, allowed when the leaf variance is positive) would make the score
  // infinite; the score only chooses the pair (the weight is exact), so they are scored at the
  // smallest normal distance instead, which still ranks them first.
  double mpost2_term(double eps) const {
    eps = std::max(eps, std::numeric_limits<double>::min());
    return bessel_ ? bessel_->term(eps)
                   : 0.5 * shape_ * std::log(eps) + kernels::log_bessel_k(shape_, std::sqrt(eps));
  }
  // out[k] = mpost2_term(eps[k]) for a batch (vectorized; `out` may alias `eps`).
  void mpost2_terms(const double* eps, double* out, std::size_t count) const;

  // The pair's squared distance: leaves from the cache, others from the row of the later
  // cluster, or (LeafPairs::on_demand; MPost2 clusters keep no distance row) from the two
  // means, by the same kernel, so with the same value.
  double eps(const ClusterNode& a, const ClusterNode& b) const {
    if (a.id < n_ && b.id < n_ && !eps_.empty())
      return eps_[lower_index(std::min(a.id, b.id), std::max(a.id, b.id))];
    const ClusterNode& later = a.id > b.id ? a : b;
    const ClusterNode& earlier = a.id > b.id ? b : a;
    if (!later.eps_row.empty()) return later.eps_row[earlier.id];
    return kernels::squared_distance(a.mean.data(), b.mean.data(), dims_);
  }

  // MPost2 (with_bessel_terms): cluster c's pair weights E against the node ids below c.id,
  // and its scale sigma (leaves: half the largest Bessel term of their row, so that
  // L_ij <= min of the two row maxima <= sigma_i + sigma_j).
  // Null for a merged cluster whose row is not filled in yet.
  const double* pair_weight_row(const ClusterNode& c) const {
    if (c.id < n_) return leaf_weights_.data() + lower_index(0, c.id);
    const auto& row = static_cast<const Mpost2ClusterNode&>(c).pair_weight_row;
    return row.empty() ? nullptr : row.data();
  }
  double weight_scale(const ClusterNode& c) const {
    if (c.id < n_) return leaf_scales_[c.id];
    return static_cast<const Mpost2ClusterNode&>(c).weight_scale;
  }
  double leaf_scale(std::size_t leaf) const { return leaf_scales_[leaf]; }
  // With leaf sums: leaf j's weights against the later leaves, contiguous (the same values as
  // their rows hold at j): column[i - j - 1] = E_ij for j < i < n. When leaf j merges, every
  // live row that holds it drops its term; reading the leaves' terms from the rows cost a cache
  // miss per row (at n = 400 a sixth of the run).
  const double* leaf_column(std::size_t j) const {
    return leaf_columns_.data() + j * (2 * n_ - j - 1) / 2;
  }
  // MPost2: whether states carry leaf row sums (Mpost2RowSums), and those of the first state
  // (every leaf live, in order: by position = by leaf id).
  bool uses_leaf_sums() const { return initial_sums_ != nullptr; }
  const std::shared_ptr<const LeafRowSums>& initial_leaf_sums() const { return initial_sums_; }

 private:
  // Leaf pairs are stored by rows of the later leaf: the pair (j, i), j < i, at i (i - 1) / 2 + j.
  static std::size_t lower_index(std::size_t j, std::size_t i) { return i * (i - 1) / 2 + j; }

  std::size_t n_, dims_;
  double shape_;  // p = 1 - d/2
  std::optional<kernels::LogBesselKFixedOrder> bessel_;
  // O(n^2) tables, each filled in whole by a loop on the run's threads (large_array.hpp).
  LargeArray<double> eps_;                           // squared distances, by lower_index
  LargeArray<double> leaf_weights_;                  // E, by lower_index
  LargeArray<double> leaf_columns_;                  // E by columns (leaf sums only)
  std::vector<double> leaf_scales_;                  // sigma_i
  std::shared_ptr<const LeafRowSums> initial_sums_;  // null: dense row sums
};

}  // namespace kingman::detail
