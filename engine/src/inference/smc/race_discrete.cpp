// The race's binary / multinomial model. A pair created at t_C0 has the clock law
// q_C(tau) ∝ e^{-(t_C0 - tau)} Z_C(tau): with delta = t_C0 - tau that is DiscreteDurationLaw
// with rate 1 and start time t_C0, whose mass is N_C and whose upper mass beyond delta, over
// N_C, is S_C(t_C0 - delta). Clocks are drawn by inversion of that law from the clock's first
// uniform. There is no cheap bound on the law's distribution function here, so rows draw every
// clock: O(n^2) laws per particle, each an adaptive quadrature of 10-30 microseconds.
// With one mutation rate the masses and kill factors need no law: N_C and the upper mass
// S_C(t) N_C = e^{-(t_C0 - t)} G_C(t) (the mass of the same pair's law started at t) are
// Gauss-Jacobi sums (discrete_pair_mass.hpp), so a kill factor is log G_C(t_C0) - log G_C(t),
// and a clock is the root of its upper mass (DiscretePairMasses::quantile; the law only for the
// lowest 2^-10 of quantiles).
#include "race_discrete.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "../../model/discrete_duration_law.hpp"
#include "../../model/discrete_pair_mass.hpp"
#include "discrete_particle_state.hpp"
#include "kingman/model/discrete_messages.hpp"
#include "race_engine.hpp"

namespace kingman::detail {

namespace {

class DiscreteRaceModel {
 public:
  // Added to a clock's bound on its quantile (not_after_threshold), so that rounding never skips
  // a clock that would ring after the threshold.
  static constexpr double kBoundMargin = 1e-12;

  using Node = DiscreteClusterNode;
  using State = DiscreteParticleState;
  // The two clusters (alive while the law is used) and the pair's creation time; with one
  // mutation rate, log N_C once a bound or a clock has needed it (both may, for one law).
  struct Law {
    const Node* row;
    const Node* partner;
    double created;
    mutable double log_mass = std::numeric_limits<double>::quiet_NaN();
  };

  explicit DiscreteRaceModel(const DiscreteData& data) : data_(&data) {
    const std::vector<double>& rates = data.mutation_rate;
    if (std::all_of(rates.begin(), rates.end(), [&](double r) { return r == rates.front(); }) &&
        DiscretePairMasses::supports(1.0, rates.front()))
      masses_.emplace(1.0, rates.front(), data.d);
  }

  void fill_leaves(std::span<Node> leaves) const { fill_discrete_leaves(*data_, leaves); }

  Law law(const Node& row_cluster, const Node& partner) const {
    return {&row_cluster, &partner, std::min(row_cluster.time, partner.time)};
  }

  // log N_C of a law whose pair the masses handle (`pair`, assigned from it).
  double mass_of(const Law& law, const DiscretePair& pair) const {
    if (std::isnan(law.log_mass)) law.log_mass = masses_->log_mass(pair, law.created);
    return law.log_mass;
  }

  // With one mutation rate, the creation time (pairs of older clusters first). With per-column
  // rates, where every clock drawn builds its law, created - delta at the largest of the clock
  // density's values at delta = 0 and 2^j / 4 for j = 0 ... 6: rows then draw the clocks likely
  // to ring first, and the threshold they set skips most of the others (not_after_threshold).
  double typical(const Law& law) const {
    if (masses_) return law.created;
    thread_local DiscretePair pair;
    pair.assign(*data_, law.row->view(), law.partner->view());
    double best_delta = 0.0, best = -std::numeric_limits<double>::infinity();
    for (double delta = 0.0, next = 0.25; delta <= 16.0; delta = next, next *= 2.0) {
      const double value = -delta + pair.log_local_likelihood(law.created - delta);
      if (value > best) {
        best = value;
        best_delta = delta;
      }
    }
    return law.created - best_delta;
  }

  // Clocks are never later than the pair's creation, so a threshold not before it bounds them
  // all. Otherwise, with one mutation rate, the clock created - delta(w) is at most theta
  // exactly when its quantile w is at least the lower share of delta = created - theta,
  // 1 - upper(delta) / N_C, two Gauss-Jacobi sums where drawing the clock would take about six:
  // that share, raised by kBoundMargin (far above the sums' and the quantiles' rounding, ~1e-13
  // relative), is the bound. Without the masses every clock is drawn.
  double not_after_threshold(const Law& law, double theta) const {
    if (theta >= law.created) return 0.0;
    if (const DiscretePair* pair = exact_pair(*law.row, *law.partner)) {
      // The race's laws have rate 1: upper(delta) = e^{-delta} G_C(created - delta).
      const double delta = law.created - theta;
      const double upper_share =
          std::exp(-delta + masses_->log_mass(*pair, theta) - mass_of(law, *pair));
      return 1.0 - upper_share + kBoundMargin;
    }
    // Per-column rates: a bound on the law's share below delta, for a few exps per column
    // instead of the law (log_lower_share_upper_bound; it carries its own factor 2 for rounding).
    // e^-700 is below any uniform's resolution (2^-53 steps).
    thread_local DiscretePair pair;
    pair.assign(*data_, law.row->view(), law.partner->view());
    const double log_share =
        log_lower_share_upper_bound(pair, 1.0, law.created, law.created - theta);
    if (log_share < -700.0) return 0.0;
    return log_share < 0.0 ? std::exp(log_share) : 1.0;
  }

  template <typename Stream>
  double clock(const Law& law, double w, Stream& /*stream*/) const {
    if (const DiscretePair* pair = exact_pair(*law.row, *law.partner)) {
      const double delta = masses_->quantile(*pair, law.created, mass_of(law, *pair), w);
      if (!std::isnan(delta)) return law.created - delta;  // else w is below its range
    }
    const DiscreteDurationLaw& duration = build(*law.row, *law.partner, law.created);
    return law.created - duration.draw(w);
  }

  double log_mass(const Node& a, const Node& b) const {
    const double birth = std::min(a.time, b.time);
    if (const DiscretePair* pair = exact_pair(a, b)) return masses_->log_mass(*pair, birth);
    return build(a, b, birth).log_mass();
  }

  // log(e^{-(t_C0 - t)} / S_C(t)) = -(t_C0 - t) + log N_C - log(upper mass beyond t_C0 - t).
  double log_kill_factor(const Node& merged, const Node& other, double t) const {
    const double birth = std::min(merged.time, other.time);
    const double delta = birth - t;
    if (!(delta > 0.0)) return 0.0;  // killed when created: S_C = 1
    if (const DiscretePair* pair = exact_pair(merged, other))
      return masses_->log_mass(*pair, birth) - masses_->log_mass(*pair, t);
    // -log(1 - F) with F the law's share below delta: where F <= e^-40 it lies within 5e-18 of
    // 0, below the rounding of the weight it joins, and the law is not built.
    thread_local DiscretePair pair;
    pair.assign(*data_, merged.view(), other.view());
    if (log_lower_share_upper_bound(pair, 1.0, birth, delta) < -40.0) return -delta;
    const DiscreteDurationLaw& duration = build(merged, other, birth);
    return -delta + (duration.log_mass() - duration.log_upper(delta));
  }

  std::unique_ptr<Node> merged(const Node& a, const Node& b, double t, std::size_t id,
                               std::uint64_t clock_key) const {
    auto node = std::make_unique<Node>();
    node->id = id;
    node->time = t;
    node->clock_key = clock_key;
    node->message.resize(data_->d * data_->categories);
    node->observed.resize(data_->d);
    merge_discrete_clusters(*data_, a.view(), b.view(), t, node->message.data(),
                            node->observed.data());
    return node;
  }

  MergeTree tree(const State& state, std::size_t leaf_count) const {
    return live_merge_tree(state, leaf_count);
  }

 private:
  // The pair's clock law, in per-thread storage reused from call to call.
  const DiscreteDurationLaw& build(const Node& a, const Node& b, double created) const {
    thread_local DiscretePair pair;
    thread_local DiscreteDurationLaw duration;
    pair.assign(*data_, a.view(), b.view());
    duration.assign(pair, 1.0, created);
    return duration;
  }

  // The pair in per-thread storage when its masses are Gauss-Jacobi sums, else null.
  const DiscretePair* exact_pair(const Node& a, const Node& b) const {
    if (!masses_) return nullptr;
    thread_local DiscretePair pair;
    pair.assign(*data_, a.view(), b.view());
    return masses_->handles(pair) ? &pair : nullptr;
  }

  const DiscreteData* data_;
  std::optional<DiscretePairMasses> masses_;  // with one mutation rate: rate 1's rule
};

}  // namespace

std::unique_ptr<ParticleSystem> make_discrete_race_system(const DiscreteData& data,
                                                          const SmcOptions& options) {
  return std::make_unique<race::RaceSystem<DiscreteRaceModel>>(DiscreteRaceModel(data), data.n,
                                                               options);
}

}  // namespace kingman::detail
