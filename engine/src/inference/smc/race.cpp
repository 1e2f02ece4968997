// The regenerative race (MODEL.md section 6) for the Brownian model.
//
// Proposal. A pair C of live clusters is created at t_C0 = min(t_l, t_r), when the later of its
// clusters appears, and draws once a merge time tau_C <= t_C0 from its rate-1 local posterior
// q_C(tau) = e^{-(t_C0 - tau)} Z_C(tau) / N_C: s = r_C + 2 (t_C0 - tau) is an exact draw from the
// GIG(1 - d/2, eps_C, 1) truncated to s >= r_C (r_C at t_C0). At each step the live pair with
// the most recent tau wins and merges at t_k = tau_{C*}; the pairs of the two merged clusters
// die; the new cluster creates a pair with every live cluster.
//
// Weight. Given the history, the clocks of live pairs are independent draws of q_C conditioned
// on tau_C < t_{k-1}, so the next merge has density q_{C*}(t_k)/S_{C*}(t_{k-1}) times
// S_C(t_k)/S_C(t_{k-1}) for every other live pair (S_C(t) = P_q(tau_C < t); S = 1 at creation).
// With the intermediate targets gamma_k(theta) prod_{live C} e^{t_C0 - t_k} S_C(t_k) (the
// coalescent's factor e^{-(time alive)} of a live pair deferred to its death; equal to the
// posterior once no pair is live), the factors of surviving pairs cancel and
//     alpha_k = N_{C*} prod_{C killed at k, C != C*} e^{-(t_C0 - t_k)} / S_C(t_k),
// which is MODEL.md's formula; tests/stats/race_exactness_test.cpp checks it against exact
// enumeration. Both parts are GIG integrals with psi = 1: N_C = G_C(r_C) (the pair mass with
// lambda = 1, one incomplete integral per step) and 1/S_C = I(r_C) / I(r'), I(r) = int_r^inf f,
// where r' = r_C + 2(t_C0 - t_k) is the pair's offset at t_k. A step kills 2(m - 2) pairs, so
// their factors are computed in three tiers: most killed pairs are far from ringing (the mass
// of s in [r_C, r'] is below e^-40 of the rest, shown by a log-concavity bound) and their factor
// is e^{-(t_C0 - t_k)}; far enough below the mode I(r) = I(0) - (a lower tail by 16-point
// Gauss-Laguerre, gig_tail.hpp), with I(0) a Bessel function; else adaptive quadrature.
//
// Selection. Each live cluster owns the pairs it forms with live clusters of smaller node id
// (its "row": a cluster's row is complete when it is created, and later only loses partners).
// A row keeps its kListed best clocks and a bound on the rest; a step scans the rows for the
// most recent clock, and a row is rescanned only when its listed partners have all merged and
// its bound is the largest key. Per particle and step that is O(m) work besides the m - 2 new
// clocks, so O(n^2) per particle in all.
//
// Memory. A clock is never stored beyond a row's few best: its draw is a pure function of a
// counter-based stream (ClockStream: Philox at counter (clock key of the row's cluster, partner
// node id, block)), so a rescan recomputes the same value. Clock keys are unique per cluster
// and lineage: leaf rows use (lineage, leaf id), where the lineage is the index of the particle
// at step 0 whose leaf-pair clocks a particle inherited; a merged cluster uses (creating
// particle, node id), stored in its node. Resampled copies share nodes, history and keys, so
// they share every clock: the clocks of live pairs are part of the particle's state (the SMC
// runs on (history, live clocks), whose transition, the argmax plus fresh clocks for new pairs,
// has the marginal law above, so alpha_k is still its potential). A particle holds O(m)
// numbers, its live cluster pointers and rows; memory is O(N n + n d) plus the shared nodes.
// Copies of one state make the same next merge with the same weight: a step computes the
// selection and the weight once per group of copies.
#include "race.hpp"
#include "../../scheduler/parallel_for.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "kingman/error.hpp"
#include "kingman/kernels/gig.hpp"
#include "kingman/kernels/gig_quantile.hpp"
#include "kingman/kernels/gig_quick_sampler.hpp"
#include "kingman/kernels/gig_tail.hpp"
#include "kingman/kernels/rng.hpp"
#include "particle_state.hpp"

namespace kingman::detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Clocks a row lists: enough that most rows never need a rescan.
constexpr std::size_t kListed = 4;
// Pairs of a row drawn before the skip test starts, chosen by their clock at the GIG mode.
constexpr std::size_t kSeeded = 4;
// Where a pair's clock law switches from inversion to rejection (see RateOnePair::cut).
constexpr double kCutSpreads = 4.0;
// A killed pair's survival correction log(1 + L/U) <= L/U is dropped when L/U < e^-40: the
// log weight moves by less than 1e-17.
constexpr double kLogNegligible = -40.0;

// The rate-1 quantities of a pair (psi = 1 in the GIG integrals of MODEL.md section 5).
class RateOnePair {
 public:
  RateOnePair(std::size_t dims, double log_det_lambda)
      : shape_(1.0 - 0.5 * static_cast<double>(dims)),
        constant_(-std::log(2.0) -
                  0.5 * static_cast<double>(dims) * std::log(2.0 * std::numbers::pi) -
                  0.5 * log_det_lambda) {}

  double shape() const { return shape_; }

  // The GIG mode (psi = 1): where the density of u = log s peaks.
  double mode(double eps) const {
    const double root = std::sqrt(shape_ * shape_ + eps);
    return shape_ >= 0.0 ? shape_ + root : eps / (root - shape_);
  }

  // A pair's clock is tau = created - (s - r)/2 with s from the GIG truncated to s >= r, drawn
  // in two parts split at a cut s_c that depends on the pair alone, four spreads (of log s)
  // below the mode: with the clock's first uniform w and P = P(s < s_c) (exact, from cheap
  // tail integrals), s = F^{-1}(w) by inversion when w < P, else a rejection draw (the quick
  // sampler) from the part beyond s_c with the stream's next uniforms. Both parts are exact
  // and chosen with their exact probabilities, so s is exact; and below s_c, s is monotone in
  // w, which is what certainly_not_after uses. Plain inversion everywhere would do as well but
  // costs ~30 times more than the rejection draw in the bulk, where most drawn clocks are.
  double cut(double eps) const {
    const double mode = this->mode(eps);
    const double spread = 1.0 / std::sqrt(0.5 * (eps / mode + mode));
    return mode * std::exp(-kCutSpreads * spread);
  }

  // A number b such that the clock with first uniform w is certainly not later than theta
  // when w >= b (b <= 0: whatever w; b >= 1: no w shows it). `mode` is mode(eps). tau > theta needs
  // s < s_theta = r + 2 (created - theta); where s_theta <= s_c that means the inverted part, w <
  // F(s_theta), and F(s_theta) <= L/U (survival_bound).
  double not_after_threshold(double eps, double mode, double offset, double created,
                             double theta) const {
    if (theta >= created) return 0.0;
    const double s_theta = offset + 2.0 * (created - theta);
    const SurvivalBound bound = survival_bound(eps, mode, s_theta);
    // s_theta above the cut, or no bound.
    if (!(bound.log_below_mode <= -kCutSpreads * bound.spread) || !(bound.log_ratio < kInf))
      return 1.0;
    // e^-700 / scale is below any uniform's resolution (2^-53 steps).
    if (bound.log_ratio < -700.0 && bound.scale >= 1e-200) return 0.0;
    return std::exp(bound.log_ratio) / bound.scale;
  }

  // The clock for first uniform w and the rest of its stream.
  template <typename Stream>
  double clock(double eps, double offset, double created, double w, Stream& stream) const {
    const double cut_point = cut(eps);
    double log_beyond = std::nan("");  // log int_r^inf f, computed only when needed
    if (cut_point > offset) {
      log_beyond = kernels::log_gig_mass_beyond(shape_, eps, 1.0, offset);
      const double log_below_cut = log_interval(eps, offset, cut_point);
      if (std::log(w) < log_below_cut - log_beyond) {
        return created - 0.5 * kernels::gig_truncated_quantile_excess(shape_, eps, 1.0, offset, w,
                                                                      log_beyond);
      }
    }
    const double lower = std::max(offset, cut_point);
    const double s = kernels::QuickTruncatedGigSampler(shape_, eps, 1.0, lower)(stream);
    return created - std::max(0.0, 0.5 * (s - offset));
  }

  // log N_C = log int_0^inf e^{-delta} Z_C(r + 2 delta) d delta.
  double log_mass(double eps, double offset) const {
    if (offset > 0.0) {
      return constant_ + shape_ * std::log(offset) - eps / (2.0 * offset) +
             kernels::log_gig_upper_integral_scaled(shape_, eps, 1.0, offset);
    }
    return constant_ + kernels::log_gig_normalizer(shape_, eps, 1.0);
  }

  // log(e^{-delta} / S_C) for a pair killed delta after its creation, when its offset has grown
  // from `offset` to `offset_now` = offset + 2 delta: -delta + log(1 + L/U), L the mass of s
  // in [offset, offset_now] and U beyond.
  double log_kill_factor(double eps, double offset, double offset_now, double delta) const {
    if (!(offset_now > offset)) return 0.0;  // killed when created: S_C = 1
    if (survival_negligible(eps, offset_now)) return -delta;
    // 1 + L/U = I(offset) / I(offset_now), I(r) = int_r^inf f = I - T(r), T(r) = int_0^r f,
    // with I the complete (Bessel) integral and the lower tails T by Gauss-Laguerre far below
    // the mode (1e-10 relative; there T / I < ~1e-3, so the log weight moves by < 1e-12), or
    // by adaptive quadrature.
    const double log_total = kernels::log_gig_normalizer(shape_, eps, 1.0);
    const double log_tail_now = kernels::log_gig_lower_tail_laguerre(shape_, eps, 1.0, offset_now);
    const double log_tail_then =
        offset > 0.0 ? kernels::log_gig_lower_tail_laguerre(shape_, eps, 1.0, offset) : -kInf;
    const double log_upper_then =
        std::isnan(log_tail_then) ? kernels::log_gig_upper_integral(shape_, eps, 1.0, offset)
                                  : log_total + std::log1p(-std::exp(log_tail_then - log_total));
    const double log_upper_now = std::isnan(log_tail_now)
                                     ? kernels::log_gig_upper_integral(shape_, eps, 1.0, offset_now)
                                     : log_total + std::log1p(-std::exp(log_tail_now - log_total));
    return -delta + (log_upper_then - log_upper_now);
  }

 private:
  // log int_a^b f for 0 <= a < b below the mode: the Laguerre lower tails where they apply (the
  // difference only when it loses no precision), else the adaptive integral.
  double log_interval(double eps, double a, double b) const {
    const double tail_b = kernels::log_gig_lower_tail_laguerre(shape_, eps, 1.0, b);
    if (!std::isnan(tail_b)) {
      if (a == 0.0) return tail_b;
      const double tail_a = kernels::log_gig_lower_tail_laguerre(shape_, eps, 1.0, a);
      if (!std::isnan(tail_a) && tail_a < tail_b - 1.0)
        return tail_b + std::log1p(-std::exp(tail_a - tail_b));
    }
    return kernels::log_gig_interval_integral(shape_, eps, 1.0, a, b);
  }

  // An upper bound on log(L/U), L = int_{r}^{s} f, U = int_{s}^inf f, from s alone: the pair
  // (log_ratio, scale) with log(L/U) <= log_ratio - log(scale); log_ratio = +inf where it gives
  // none. In u = log s the integrand e^{phi(u)}, phi(u) = p u - (eps e^-u + e^u)/2, is
  // log-concave. Left of the mode u*, the tangent at log s bounds phi from above, so
  // L <= e^{phi(log s)} / phi'(log s); and U holds at least the stretch [u*, u* + h] where
  // phi >= phi(u* + h) >= p (u* + h) - (eps / mode + mode (1 + h + h^2))/2 (e^-h <= 1 and
  // e^h <= 1 + h + h^2 for h = min(1, 1/sqrt(-phi''(u*)))). One log and one square root.
  struct SurvivalBound {
    double log_ratio;
    double scale;
    double log_below_mode;  // log(s / mode)
    double spread;          // 1/sqrt(-phi''(u*))
  };
  SurvivalBound survival_bound(double eps, double mode, double s) const {
    const double spread = 1.0 / std::sqrt(0.5 * (eps / mode + mode));
    const double log_below_mode = std::log(s / mode);
    const double slope = shape_ + 0.5 * (eps / s - s);
    if (!(s < mode) || !(slope > 0.0)) return {kInf, 1.0, log_below_mode, spread};
    const double h = std::min(1.0, spread);
    const double log_ratio = shape_ * (log_below_mode - h) - 0.5 * (eps / s + s) +
                             0.5 * (eps / mode + mode * (1.0 + h + h * h));
    return {log_ratio, slope * h, log_below_mode, spread};
  }

  // Whether log(L/U) < kLogNegligible by that bound.
  bool survival_negligible(double eps, double offset_now) const {
    const SurvivalBound bound = survival_bound(eps, mode(eps), offset_now);
    if (!(bound.log_ratio < kInf)) return false;
    // Most killed pairs are far in the tail: decide without the second log when the scale
    // cannot matter.
    if (bound.scale >= 1e-6 && bound.log_ratio < kLogNegligible - 14.0) return true;
    return bound.log_ratio - std::log(bound.scale) < kLogNegligible;
  }

  double shape_, constant_;
};

// The uniforms of one pair clock: Philox4x32-10 blocks at counters (row key, partner id, block
// index) under one key per run, derived from the seed apart from the SMC loop's streams.
// Distinct clocks have distinct counters, hence independent blocks; a clock needs 1 to 3.
class ClockStream {
 public:
  ClockStream(std::array<std::uint32_t, 2> key, std::uint64_t row_key, std::uint32_t partner)
      : key_(key), row_key_(row_key), partner_(partner) {}

  double uniform() {
    if (used_ == 2) {
      const auto block =
          kernels::philox4x32({static_cast<std::uint32_t>(row_key_),
                               static_cast<std::uint32_t>(row_key_ >> 32), partner_, index_++},
                              key_);
      uniforms_[0] = to_uniform((std::uint64_t{block[0]} << 32) | block[1]);
      uniforms_[1] = to_uniform((std::uint64_t{block[2]} << 32) | block[3]);
      used_ = 0;
    }
    return uniforms_[used_++];
  }

  static std::array<std::uint32_t, 2> key_for(std::uint64_t seed) {
    // "race", "clck": a counter no RandomStream key derivation uses.
    const auto block = kernels::philox4x32(
        {0x72616365u, 0x636c636bu, 0u, 0u},
        {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
    return {block[0], block[1]};
  }

 private:
  // Uniform on the open interval (0, 1), as RandomStream::uniform.
  static double to_uniform(std::uint64_t bits) {
    return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53;
  }

  std::array<std::uint32_t, 2> key_;
  std::uint64_t row_key_;
  std::uint32_t partner_;
  std::uint32_t index_ = 0;
  int used_ = 2;
  std::array<double, 2> uniforms_{};
};

// A clock listed in a row: the pair of the row's cluster and `partner` (a node id).
struct Clock {
  double time;            // tau
  std::uint32_t partner;  // node id
};

// Rings first: the more recent time; ties (of measure zero) to the smaller partner id.
bool rings_before(const Clock& a, const Clock& b) {
  return a.time > b.time || (a.time == b.time && a.partner < b.partner);
}

// The clocks of one live cluster with the live clusters of smaller node id.
struct Row {
  std::array<Clock, kListed> listed{};  // the best clocks whose partner is live, first first
  std::uint32_t count = 0;              // listed clocks in use
  double bound = -kInf;                 // no unlisted clock is later; -inf: none unlisted

  // The row's most recent clock time, or an upper bound on it when stale.
  double key() const { return count > 0 ? listed[0].time : bound; }
  bool stale() const { return count == 0 && bound > -kInf; }
};

struct RaceParticle {
  ParticleState state;        // live clusters sorted by node id (merged ones are appended)
  std::vector<Row> rows;      // rows[x] belongs to state.live[x]
  std::uint32_t lineage = 0;  // the step-0 particle whose leaf-pair clocks this one has
};

// The next merge of a particle: live positions of the winning pair and its time.
struct Selection {
  std::size_t row = 0;      // position of the row's cluster (the larger id)
  std::size_t partner = 0;  // position of its partner
  double time = 0.0;        // t_k
};

class RaceSystem final : public ParticleSystem {
 public:
  RaceSystem(const WhitenedData& data, double leaf_variance, const SmcOptions& options)
      : clock_stream_key_(ClockStream::key_for(options.seed)),
        n_(data.n),
        d_(data.d),
        pair_(data.d, data.log_det_lambda),
        particles_(options.particles),
        next_(options.particles) {
    if (data.n >= (std::size_t{1} << 31) || options.particles >= (std::size_t{1} << 32)) {
      throw OptionError("race: at most 2^31 points and 2^32 particles");
    }
    // Leaves are shared by every particle.
    std::vector<std::shared_ptr<const ClusterNode>> leaves(n_);
    for (std::size_t i = 0; i < n_; ++i) {
      auto leaf = std::make_shared<ClusterNode>();
      leaf->id = i;
      leaf->variance = leaf_variance;
      leaf->mean.assign(data.row(i), data.row(i) + data.d);
      leaves[i] = std::move(leaf);
    }
    for (std::size_t s = 0; s < particles_.size(); ++s) {
      particles_[s].state.live = leaves;
      particles_[s].rows.resize(n_);
      particles_[s].lineage = static_cast<std::uint32_t>(s);
    }
    // Every particle draws its own leaf-pair clocks; rows are independent of each other.
    parallel_for_range(0, particles_.size(), [&](const auto& r) {
      for (std::size_t s = r.begin(); s != r.end(); ++s) {
        parallel_for_range(1, n_, [&](const auto& rows) {
          for (std::size_t x = rows.begin(); x != rows.end(); ++x) rescan(particles_[s], x);
        });
      }
    });
  }

  void extend(std::size_t step, std::span<double> log_alpha) override {
    const std::size_t count = particles_.size();
    // Copies of one state (same history, same leaf clocks) make the same next merge with the
    // same weight: group them, in particle order.
    struct Group {
      std::vector<std::size_t> members;
      Selection selection;
      double log_alpha = 0.0;
    };
    std::vector<Group> groups;
    std::vector<std::size_t> group_of(count);
    std::map<std::pair<const HistoryNode*, std::uint32_t>, std::size_t> group_by_state;
    for (std::size_t s = 0; s < count; ++s) {
      const auto key = std::make_pair(particles_[s].state.history.get(), particles_[s].lineage);
      const auto [it, added] = group_by_state.emplace(key, groups.size());
      if (added) groups.emplace_back();
      groups[it->second].members.push_back(s);
      group_of[s] = it->second;
    }
    // The first member selects (rescanning rows as needed) and weighs; the others take its
    // rows, which the rescans may have changed.
    parallel_for_range(0, groups.size(), [&](const auto& r) {
      for (std::size_t g = r.begin(); g != r.end(); ++g) {
        Group& group = groups[g];
        RaceParticle& leader = particles_[group.members.front()];
        group.selection = select(leader);
        group.log_alpha = log_incremental_weight(leader, group.selection, step);
        for (std::size_t k = 1; k < group.members.size(); ++k)
          particles_[group.members[k]].rows = leader.rows;
      }
    });
    parallel_for_range(0, count, [&](const auto& r) {
      for (std::size_t s = r.begin(); s != r.end(); ++s) {
        const Group& group = groups[group_of[s]];
        merge(particles_[s], group.selection, step, s);
        log_alpha[s] = group.log_alpha;
      }
    });
  }

  void resample(std::span<const std::size_t> ancestors) override {
    for (std::size_t s = 0; s < particles_.size(); ++s) next_[s] = particles_[ancestors[s]];
    std::swap(particles_, next_);
    // Release the old generation's clusters now rather than at the next resampling.
    for (RaceParticle& old : next_) old = RaceParticle{};
  }

  MergeTree tree(std::size_t particle) const override {
    return to_merge_tree(particles_[particle].state, n_);
  }

 private:
  // Key of the streams of the clocks in `row_cluster`'s row (see the top of this file).
  std::uint64_t clock_key(const ClusterNode& row_cluster, std::uint32_t lineage) const {
    if (row_cluster.id < n_) return (std::uint64_t{lineage} << 32) | row_cluster.id;
    return row_cluster.clock_key;
  }

  double squared_distance(const ClusterNode& a, const ClusterNode& b) const {
    double sum = 0.0;
    for (std::size_t j = 0; j < d_; ++j) {
      const double diff = a.mean[j] - b.mean[j];
      sum += diff * diff;
    }
    return sum;
  }

  // What a pair's clock depends on besides its uniform.
  struct PairLaw {
    double eps;      // squared distance
    double created;  // t_C0 = min(t_l, t_r)
    double offset;   // r_C at creation
  };

  PairLaw pair_law(const ClusterNode& row_cluster, const ClusterNode& partner) const {
    const double created = std::min(row_cluster.time, partner.time);
    // r_C at creation, as a sum of nonnegative terms.
    const double offset = (row_cluster.variance + partner.variance) +
                          ((row_cluster.time - created) + (partner.time - created));
    const double eps = squared_distance(row_cluster, partner);
    if (eps == 0.0 && offset == 0.0 && pair_.shape() <= 0.0) {
      throw NumericalError("race: points " + std::to_string(row_cluster.id) + " and " +
                           std::to_string(partner.id) +
                           " coincide with leaf variance 0, where the model's density is "
                           "infinite; use a leaf variance > 0");
    }
    return {eps, created, offset};
  }

  // Recomputes the row of live position x: its kListed best clocks and a bound on the rest.
  // Clocks are drawn by inversion, monotone in their uniform, so most need no draw: once the
  // row has kListed clocks, a pair whose uniform shows (by a cheap bound on its distribution
  // function) that it cannot ring after the kListed-th best is skipped, and the row's bound
  // covers it. The pairs most likely to ring late (by the clock at their GIG mode) are drawn
  // first, so that the skip test has a late threshold from the start.
  void rescan(RaceParticle& particle, std::size_t x) const {
    const auto& live = particle.state.live;
    const ClusterNode& cluster = *live[x];
    struct Candidate {
      double typical;  // the clock at the GIG mode (a ranking only)
      double mode;     // pair_.mode(law.eps)
      PairLaw law;
      std::uint32_t partner;  // live position
    };
    thread_local std::vector<Candidate> candidates;
    candidates.resize(x);
    for (std::size_t y = 0; y < x; ++y) {
      const PairLaw law = pair_law(cluster, *live[y]);
      const double mode = pair_.mode(law.eps);
      const double typical = law.created - 0.5 * std::max(0.0, mode - law.offset);
      candidates[y] = {typical, mode, law, static_cast<std::uint32_t>(y)};
    }
    const std::size_t seeded = std::min(x, kSeeded);
    std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(seeded),
                     candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.typical > b.typical; });

    std::array<Clock, kListed + 1> best;
    std::size_t size = 0;
    auto insert = [&](const Clock& clock) {
      if (size == best.size() && !rings_before(clock, best.back())) return;
      std::size_t at = std::min(size, best.size() - 1);
      for (; at > 0 && rings_before(clock, best[at - 1]); --at) best[at] = best[at - 1];
      best[at] = clock;
      size = std::min(size + 1, best.size());
    };
    double skipped_bound = -kInf;  // no skipped clock is later
    for (std::size_t i = 0; i < x; ++i) {
      const Candidate& candidate = candidates[i];
      const ClusterNode& partner = *live[candidate.partner];
      const PairLaw& law = candidate.law;
      // The uniform is drawn only when the skip test needs it or the clock is drawn.
      double skip_from = 1.0;  // skip when w >= skip_from
      double threshold = -kInf;
      if (i >= seeded && size >= kListed) {
        threshold = best[kListed - 1].time;
        skip_from =
            pair_.not_after_threshold(law.eps, candidate.mode, law.offset, law.created, threshold);
        if (skip_from <= 0.0) {
          skipped_bound = std::max(skipped_bound, threshold);
          continue;
        }
      }
      ClockStream stream(clock_stream_key_, clock_key(cluster, particle.lineage),
                         static_cast<std::uint32_t>(partner.id));
      const double w = stream.uniform();
      if (w >= skip_from) {
        skipped_bound = std::max(skipped_bound, threshold);
        continue;
      }
      insert({pair_.clock(law.eps, law.offset, law.created, w, stream),
              static_cast<std::uint32_t>(partner.id)});
    }
    Row& row = particle.rows[x];
    row.count = static_cast<std::uint32_t>(std::min(size, kListed));
    std::copy_n(best.begin(), row.count, row.listed.begin());
    row.bound = std::max(size > kListed ? best[kListed].time : -kInf, skipped_bound);
  }

  // The live pair with the most recent clock.
  Selection select(RaceParticle& particle) const {
    auto& rows = particle.rows;
    for (;;) {
      std::size_t winner = rows.size();
      double key = -kInf;
      for (std::size_t x = 0; x < rows.size(); ++x) {
        if (rows[x].key() > key) {
          key = rows[x].key();
          winner = x;
        }
      }
      if (winner == rows.size()) throw NumericalError("race: no live pair has a finite clock");
      if (rows[winner].stale()) {
        rescan(particle, winner);
        continue;
      }
      const auto& live = particle.state.live;
      const std::size_t partner_id = rows[winner].listed[0].partner;
      const auto partner = std::lower_bound(
          live.begin(), live.end(), partner_id,
          [](const std::shared_ptr<const ClusterNode>& c, std::size_t id) { return c->id < id; });
      return {winner, static_cast<std::size_t>(partner - live.begin()), key};
    }
  }

  // log alpha_k: the winner's N_C times the survival factors of the pairs its merge kills.
  double log_incremental_weight(const RaceParticle& particle, const Selection& selection,
                                std::size_t step) const {
    const auto& live = particle.state.live;
    const double t = selection.time;
    auto created = [](const ClusterNode& a, const ClusterNode& b) {
      return std::min(a.time, b.time);
    };
    auto offset_at = [](const ClusterNode& a, const ClusterNode& b, double time) {
      return (a.variance + b.variance) + ((a.time - time) + (b.time - time));
    };
    const ClusterNode& a = *live[selection.row];
    const ClusterNode& b = *live[selection.partner];
    double log_alpha = pair_.log_mass(squared_distance(a, b), offset_at(a, b, created(a, b)));
    for (std::size_t z = 0; z < live.size(); ++z) {
      if (z == selection.row || z == selection.partner) continue;
      const ClusterNode& other = *live[z];
      for (const ClusterNode* merged : {&a, &b}) {
        const double birth = created(*merged, other);
        log_alpha += pair_.log_kill_factor(squared_distance(*merged, other),
                                           offset_at(*merged, other, birth),
                                           offset_at(*merged, other, t), birth - t);
      }
    }
    if (!(log_alpha < kInf) || std::isnan(log_alpha)) {
      throw NumericalError("race step " + std::to_string(step + 1) +
                           ": the incremental weight is not finite");
    }
    return log_alpha;
  }

  // Applies the merge: the new cluster (keyed by this particle and step) replaces the pair,
  // the rows lose the merged partners, and the new cluster's row draws its clocks.
  void merge(RaceParticle& particle, const Selection& selection, std::size_t step,
             std::size_t index) const {
    auto& live = particle.state.live;
    auto& rows = particle.rows;
    const ClusterNode& a = *live[selection.row];
    const ClusterNode& b = *live[selection.partner];
    const double t = selection.time;
    auto merged = std::make_shared<ClusterNode>();
    merged->id = n_ + step;
    merged->time = t;
    merged->clock_key = (std::uint64_t{index} << 32) | merged->id;
    // MODEL.md section 3: branch factors sigma = v + (t_c - t) >= 0.
    const double sigma_a = a.variance + (a.time - t);
    const double sigma_b = b.variance + (b.time - t);
    const double s = sigma_a + sigma_b;
    merged->variance = s > 0.0 ? sigma_a * sigma_b / s : 0.0;
    const double weight_a = s > 0.0 ? sigma_b / s : 0.5;
    const double weight_b = s > 0.0 ? sigma_a / s : 0.5;
    merged->mean.resize(d_);
    for (std::size_t j = 0; j < d_; ++j)
      merged->mean[j] = weight_a * a.mean[j] + weight_b * b.mean[j];
    const std::size_t gone_a = a.id, gone_b = b.id;
    particle.state.history = std::make_shared<const HistoryNode>(HistoryNode{
        Merge{std::min(gone_a, gone_b), std::max(gone_a, gone_b), -t}, particle.state.history});
    particle.state.time = t;

    // selection.row > selection.partner: erase the later position first.
    for (std::size_t position : {selection.row, selection.partner}) {
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(position));
      rows.erase(rows.begin() + static_cast<std::ptrdiff_t>(position));
    }
    for (Row& row : rows) {
      std::uint32_t kept = 0;
      for (std::uint32_t k = 0; k < row.count; ++k) {
        if (row.listed[k].partner != gone_a && row.listed[k].partner != gone_b)
          row.listed[kept++] = row.listed[k];
      }
      row.count = kept;
    }
    live.push_back(std::move(merged));
    rows.emplace_back();
    rescan(particle, live.size() - 1);
  }

  std::array<std::uint32_t, 2> clock_stream_key_;
  std::size_t n_, d_;
  RateOnePair pair_;
  std::vector<RaceParticle> particles_, next_;
};

}  // namespace

std::unique_ptr<ParticleSystem> make_race_system(const WhitenedData& data, double leaf_variance,
                                                 const SmcOptions& options) {
  return std::make_unique<RaceSystem>(data, leaf_variance, options);
}

}  // namespace kingman::detail
