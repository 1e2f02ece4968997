#pragma once
// Pair quantities shared by all particles: the leaf-pair squared distances (and MPost2's
// per-pair Bessel terms), computed once in parallel; pairs involving a merged cluster are
// read from that cluster's own row.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

#include "kingman/kernels/fixed_order_bessel.hpp"
#include "kingman/kernels/log_bessel_k.hpp"

#include "../condensed_index.hpp"
#include "kingman/model/whitened_data.hpp"
#include "particle_state.hpp"

namespace kingman::detail {

class LeafPairCache {
 public:
  LeafPairCache(const WhitenedData& data, bool with_bessel_terms);

  std::size_t leaf_count() const { return n_; }

  // MPost2's pair score without lambda (Henao & Lucas eq. 13): log(eps^{p/2} K_p(sqrt eps)),
  // p = 1 - d/2, from a per-run fit of the fixed-order Bessel function.
  // Identical points (eps = 0, allowed when the leaf variance is positive) would make the score
  // infinite; the score only chooses the pair (the weight is exact), so they are scored at the
  // smallest normal distance instead, which still ranks them first.
  double mpost2_term(double eps) const {
    eps = std::max(eps, std::numeric_limits<double>::min());
    const double log_eps = std::log(eps);
    return 0.5 * shape_ * log_eps + (bessel_ ? bessel_->of_square(eps, log_eps)
                                             : kernels::log_bessel_k(shape_, std::sqrt(eps)));
  }
  double eps(const ClusterNode& a, const ClusterNode& b) const {
    return lookup(a, b, eps_, &ClusterNode::eps_row);
  }
  double log_bessel(const ClusterNode& a, const ClusterNode& b) const {
    return lookup(a, b, log_bessel_, &ClusterNode::log_bessel_row);
  }

 private:
  double lookup(const ClusterNode& a, const ClusterNode& b, const std::vector<double>& leaves,
                std::vector<double> ClusterNode::*row) const {
    if (a.id < n_ && b.id < n_)
      return leaves[condensed_index(n_, std::min(a.id, b.id), std::max(a.id, b.id))];
    return a.id > b.id ? (a.*row)[b.id] : (b.*row)[a.id];
  }

  std::size_t n_;
  double shape_;  // p = 1 - d/2
  std::optional<kernels::LogBesselKFixedOrder> bessel_;
  std::vector<double> eps_;
  std::vector<double> log_bessel_;
};

}  // namespace kingman::detail
