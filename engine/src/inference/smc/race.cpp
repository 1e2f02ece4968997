// The regenerative race (MODEL.md section 6) for the Brownian model: the engine
// (race_engine.hpp) with the Brownian pair clock law.
//
// A pair's clock: s = r_C + 2 (t_C0 - tau) is an exact draw from the GIG(1 - d/2, eps_C, 1)
// truncated to s >= r_C (r_C at t_C0). The weight's parts are GIG integrals with psi = 1:
// N_C = G_C(r_C) (the pair mass with lambda = 1, one incomplete integral per step) and
// 1/S_C = I(r_C) / I(r'), I(r) = int_r^inf f, where r' = r_C + 2(t_C0 - t_k) is the pair's offset
// at t_k. A step kills 2(m - 2) pairs, so their factors are computed in three tiers: most killed
// pairs are far from ringing (the mass of s in [r_C, r'] is below e^-40 of the rest, shown by a
// log-concavity bound) and their factor is e^{-(t_C0 - t_k)}; far enough below the mode
// I(r) = I(0) - (a lower tail by 16-point Gauss-Laguerre, gig_tail.hpp), with I(0) a Bessel
// function; else adaptive quadrature. Draws are split at a cut below the mode (RateOnePair::cut)
// so that rows can skip most pairs without drawing them.
#include "race.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "kingman/error.hpp"
#include "kingman/kernels/pair_kernels.hpp"
#include "particle_state.hpp"
#include "race_engine.hpp"
#include "rate_one_pair.hpp"

namespace kingman::detail {

namespace {

using race::kInf;
using race::RateOnePair;

class BrownianRaceModel {
 public:
  using Node = ClusterNode;
  using State = ParticleState;
  // What a pair's clock depends on besides its stream.
  struct Law {
    double eps;      // squared distance
    double mode;     // the GIG mode (RateOnePair::mode)
    double created;  // t_C0 = min(t_l, t_r)
    double offset;   // r_C at creation
  };

  BrownianRaceModel(const WhitenedData& data, double leaf_variance)
      : data_(&data), leaf_variance_(leaf_variance), pair_(data.d, data.log_det_lambda) {}

  void fill_leaves(std::span<Node> leaves) const {
    detail::fill_leaves(*data_, leaf_variance_, leaves);
  }

  Law law(const Node& row_cluster, const Node& partner) const {
    return law(row_cluster, partner, squared_distance(row_cluster, partner));
  }

  // out[k] = law(row_cluster, *partners[k]) for k < count, the distances by one call of the
  // one-against-many kernel (the same values as squared_distance's).
  void laws(const Node& row_cluster, const Node* const* partners, std::size_t count,
            Law* out) const {
    thread_local std::vector<const double*> means;
    thread_local std::vector<double> eps;
    means.resize(count);
    eps.resize(count);
    for (std::size_t k = 0; k < count; ++k) means[k] = partners[k]->mean.data();
    kernels::squared_distances_to_rows(row_cluster.mean.data(), means.data(), count, data_->d,
                                       eps.data());
    for (std::size_t k = 0; k < count; ++k) out[k] = law(row_cluster, *partners[k], eps[k]);
  }

  // The law of the pair at squared distance eps.
  Law law(const Node& row_cluster, const Node& partner, double eps) const {
    const double created = std::min(row_cluster.time, partner.time);
    const double offset = offset_at(row_cluster, partner, created);
    if (eps == 0.0 && offset == 0.0 && pair_.shape() <= 0.0) {
      std::string message = "race: points ";
      message += std::to_string(row_cluster.id);
      message += " and ";
      message += std::to_string(partner.id);
      message +=
          " coincide with leaf variance 0, where the model's density is infinite; use a leaf "
          "variance > 0";
      throw NumericalError(message);
    }
    return {eps, pair_.mode(eps), created, offset};
  }

  // The clock at the GIG mode.
  double typical(const Law& law) const {
    return law.created - 0.5 * std::max(0.0, law.mode - law.offset);
  }

  double not_after_threshold(const Law& law, double theta) const {
    return pair_.not_after_threshold(law.eps, law.mode, law.offset, law.created, theta);
  }

  template <typename Stream>
  double clock(const Law& law, double w, Stream& stream) const {
    return pair_.clock(law.eps, law.offset, law.created, w, stream);
  }

  double log_mass(const Node& a, const Node& b) const {
    return pair_.log_mass(squared_distance(a, b), offset_at(a, b, std::min(a.time, b.time)));
  }

  double log_kill_factor(const Node& merged, const Node& other, double t) const {
    const double birth = std::min(merged.time, other.time);
    return pair_.log_kill_factor(squared_distance(merged, other), offset_at(merged, other, birth),
                                 offset_at(merged, other, t), birth - t);
  }

  // `sum` plus, for each live position z other than `skip_a` and `skip_b` in order,
  // log_kill_factor(a, *live[z], t) and then log_kill_factor(b, *live[z], t), added one at a
  // time: the same additions as a loop over those calls, with the factors computed in one batch
  // (RateOnePair::log_kill_factors).
  double add_log_kill_factors(double sum, const Node& a, const Node& b,
                              const std::vector<const Node*>& live, std::size_t skip_a,
                              std::size_t skip_b, double t) const {
    thread_local std::vector<double> eps, offset, offset_now, delta, factor, to_a, to_b;
    thread_local std::vector<const Node*> others;
    thread_local std::vector<const double*> means;
    others.clear();
    means.clear();
    for (std::size_t z = 0; z < live.size(); ++z) {
      if (z == skip_a || z == skip_b) continue;
      others.push_back(live[z]);
      means.push_back(live[z]->mean.data());
    }
    // The distances to a and to b, each by one call of the one-against-many kernel.
    const std::size_t count = others.size();
    to_a.resize(count);
    to_b.resize(count);
    kernels::squared_distances_to_rows(a.mean.data(), means.data(), count, data_->d, to_a.data());
    kernels::squared_distances_to_rows(b.mean.data(), means.data(), count, data_->d, to_b.data());
    eps.resize(2 * count);
    offset.resize(2 * count);
    offset_now.resize(2 * count);
    delta.resize(2 * count);
    factor.resize(2 * count);
    std::size_t k = 0;
    for (std::size_t z = 0; z < count; ++z) {
      const Node& other = *others[z];
      for (const Node* merged : {&a, &b}) {
        const double birth = std::min(merged->time, other.time);
        eps[k] = merged == &a ? to_a[z] : to_b[z];
        offset[k] = offset_at(*merged, other, birth);
        offset_now[k] = offset_at(*merged, other, t);
        delta[k] = birth - t;
        ++k;
      }
    }
    pair_.log_kill_factors(eps.data(), offset.data(), offset_now.data(), delta.data(), k,
                           factor.data());
    for (std::size_t i = 0; i < k; ++i) sum += factor[i];
    return sum;
  }

  // MODEL.md section 3: branch factors sigma = v + (t_c - t) >= 0.
  std::unique_ptr<Node> merged(const Node& a, const Node& b, double t, std::size_t id,
                               std::uint64_t clock_key) const {
    auto node = std::make_unique<Node>();
    node->id = id;
    node->time = t;
    node->clock_key = clock_key;
    const double sigma_a = a.variance + (a.time - t);
    const double sigma_b = b.variance + (b.time - t);
    const double s = sigma_a + sigma_b;
    node->variance = s > 0.0 ? sigma_a * sigma_b / s : 0.0;
    const double weight_a = s > 0.0 ? sigma_b / s : 0.5;
    const double weight_b = s > 0.0 ? sigma_a / s : 0.5;
    node->mean.resize(data_->d);
    for (std::size_t j = 0; j < data_->d; ++j)
      node->mean[j] = weight_a * a.mean[j] + weight_b * b.mean[j];
    return node;
  }

  MergeTree tree(const State& state, std::size_t leaf_count) const {
    return to_merge_tree(state, leaf_count);
  }

 private:
  // r_C at time t <= min(t_a, t_b), as a sum of nonnegative terms.
  static double offset_at(const Node& a, const Node& b, double t) {
    return (a.variance + b.variance) + ((a.time - t) + (b.time - t));
  }

  double squared_distance(const Node& a, const Node& b) const {
    return kernels::squared_distance(a.mean.data(), b.mean.data(), data_->d);
  }

  const WhitenedData* data_;
  double leaf_variance_;
  RateOnePair pair_;
};

}  // namespace

std::unique_ptr<ParticleSystem> make_race_system(const WhitenedData& data, double leaf_variance,
                                                 const SmcOptions& options) {
  return std::make_unique<race::RaceSystem<BrownianRaceModel>>(
      BrownianRaceModel(data, leaf_variance), data.n, options);
}

}  // namespace kingman::detail
