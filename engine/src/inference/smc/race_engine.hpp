#pragma once
// The regenerative race's engine (MODEL.md section 6), shared by the Brownian model (race.cpp)
// and the binary / multinomial one (race_discrete.cpp): rows of pair clocks, selection of the
// most recent clock, grouping of resampled copies, the weight's structure and the merge's
// bookkeeping. What a pair's clock law is, and how clusters merge, is the Model's business.
//
// Proposal. A pair C of live clusters is created at t_C0 = min(t_l, t_r), when the later of its
// clusters appears, and draws once a merge time tau_C <= t_C0 from its rate-1 local posterior
// q_C(tau) = e^{-(t_C0 - tau)} Z_C(tau) / N_C. At each step the live pair with the most recent
// tau wins and merges at t_k = tau_{C*}; the pairs of the two merged clusters die; the new
// cluster creates a pair with every live cluster.
//
// Weight. Given the history, the clocks of live pairs are independent draws of q_C conditioned
// on tau_C < t_{k-1}, so the next merge has density q_{C*}(t_k)/S_{C*}(t_{k-1}) times
// S_C(t_k)/S_C(t_{k-1}) for every other live pair (S_C(t) = P_q(tau_C < t); S = 1 at creation).
// With the intermediate targets gamma_k(theta) prod_{live C} e^{t_C0 - t_k} S_C(t_k) (the
// coalescent's factor e^{-(time alive)} of a live pair deferred to its death; equal to the
// posterior once no pair is live), the factors of surviving pairs cancel and
//     alpha_k = N_{C*} prod_{C killed at k, C != C*} e^{-(t_C0 - t_k)} / S_C(t_k),
// which is MODEL.md's formula; tests/stats/race_exactness_test.cpp and
// tests/stats/discrete_race_test.cpp check it against exact enumeration.
//
// Selection. Each live cluster owns the pairs it forms with live clusters of smaller node id
// (its "row": a cluster's row is complete when it is created, and later only loses partners).
// A row keeps its kListed best clocks and a bound on the rest; a step scans the rows for the
// most recent clock, and a row is rescanned only when its listed partners have all merged and
// its bound is the largest key. Per particle and step that is O(m) work besides the m - 2 new
// clocks, so O(n^2) per particle in all. A rescan need not draw every clock: where the Model
// can bound a clock's distribution function, a pair whose uniform shows that it cannot ring
// after the row's kListed-th best clock is skipped (the row's bound covers it). The pairs the
// Model ranks as most likely to ring late are drawn first, so the test has a late threshold.
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
// numbers, its live cluster pointers and rows; memory is O(N n) plus the shared nodes.
// Copies of one state make the same next merge with the same weight: a step computes the
// selection and the weight once per group of copies.
//
// The Model provides (see race.cpp and race_discrete.cpp):
//   Node (with id, time, clock_key, collect_mark), State (live: plain pointers, owned by the
//   engine's ClusterPool; history, time), Law (a pair's clock law),
//   fill_leaves(span<Node>) (the leaves, in nodes value-initialized in place), law(row, partner) ->
//   Law, typical(Law) (a ranking: larger rings later), not_after_threshold(Law, theta) -> b (the
//   clock with first uniform w is <= theta when w >= b; b >= 1 when no bound), clock(Law, w,
//   stream), log_mass(a, b) = log N_C, log_kill_factor(merged, other, t), merged(a, b, t, id,
//   clock_key) -> unique_ptr<Node>, tree(state, n).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../../scheduler/parallel_for.hpp"
#include "cluster_pool.hpp"
#include "history_pool.hpp"
#include "kingman/error.hpp"
#include "kingman/inference/smc.hpp"
#include "kingman/kernels/rng.hpp"
#include "particle_state.hpp"
#include "smc_loop.hpp"

namespace kingman::detail::race {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
// Clocks a row lists: enough that most rows never need a rescan.
inline constexpr std::size_t kListed = 4;
// Pairs of a row drawn before the skip test starts, the latest by the Model's ranking.
inline constexpr std::size_t kSeeded = 4;

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
inline bool rings_before(const Clock& a, const Clock& b) {
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

// The next merge of a particle: live positions of the winning pair and its time.
struct Selection {
  std::size_t row = 0;      // position of the row's cluster (the larger id)
  std::size_t partner = 0;  // position of its partner
  double time = 0.0;        // t_k
};

template <typename Model>
class RaceSystem final : public ParticleSystem {
 public:
  using Node = typename Model::Node;
  using State = typename Model::State;
  using Law = typename Model::Law;

  RaceSystem(Model model, std::size_t leaf_count, const SmcOptions& options)
      : model_(std::move(model)),
        clock_stream_key_(ClockStream::key_for(options.seed)),
        n_(leaf_count),
        particles_(options.particles),
        next_(options.particles) {
    if (n_ >= (std::size_t{1} << 31) || options.particles >= (std::size_t{1} << 32)) {
      throw OptionError("race: at most 2^31 points and 2^32 particles");
    }
    // Leaves are shared by every particle.
    std::vector<const Node*> leaves;
    for (const Node& leaf :
         pool_.keep_block(n_, [&](std::span<Node> nodes) { model_.fill_leaves(nodes); }))
      leaves.push_back(&leaf);
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
    std::map<std::pair<const HistoryNode*, std::uint32_t>, std::size_t> group_by_state;
    for (std::size_t s = 0; s < count; ++s) {
      const auto key = std::make_pair(particles_[s].state.history, particles_[s].lineage);
      const auto [it, added] = group_by_state.emplace(key, groups.size());
      if (added) groups.emplace_back();
      groups[it->second].members.push_back(s);
    }
    // A group's members list the same clusters: a sweep marks one list per group.
    pool_.collect_if_due(
        count, groups.size(), [&](std::size_t g) -> const auto& {
          return particles_[groups[g].members.front()].state.live;
        });
    created_.resize(count);
    history_.start_step(count, [&](std::size_t s) { return particles_[s].state.history; });
    // One parallel loop per step: in each group's task the first member selects (rescanning
    // rows as needed) and weighs, the others take its rows (which the rescans may have
    // changed), then every member merges; a large group's merges become tasks of their own.
    // (A second loop for the merges would add a fork and a join per step, where an idle worker
    // waits.)
    const std::size_t m = particles_.front().state.live.size();
    // A merge draws the new row's m - 2 clocks (a law, then a skip test or a truncated-GIG
    // draw each): ~0.7 us per partner at d = 20, i.e. some 1000 operations.
    const std::size_t merge_work = 1024 * m;
    parallel_for_work(0, groups.size(), merge_work * count / groups.size(), [&](const auto& r) {
      for (std::size_t g = r.begin(); g != r.end(); ++g) {
        Group& group = groups[g];
        Particle& leader = particles_[group.members.front()];
        group.selection = select(leader);
        group.log_alpha = log_incremental_weight(leader, group.selection, step);
        for (std::size_t k = 1; k < group.members.size(); ++k)
          particles_[group.members[k]].rows = leader.rows;
        parallel_for_work(0, group.members.size(), merge_work, [&](const auto& members) {
          for (std::size_t k = members.begin(); k != members.end(); ++k) {
            const std::size_t s = group.members[k];
            created_[s] = merge(particles_[s], group.selection, step, s);
            log_alpha[s] = group.log_alpha;
          }
        });
      }
    });
    for (auto& cluster : created_) pool_.adopt(std::move(cluster));
  }

  void resample(std::span<const std::size_t> ancestors) override {
    // A copy: the live list and the rows, a few words per live cluster.
    resample_particles(particles_, next_, ancestors, 8 * particles_.front().state.live.size());
    // Clear the old generation (buffers keep their capacity for the next resampling's copies).
    for (Particle& old : next_) {
      old.state.history = nullptr;
      old.state.live.clear();
      old.rows.clear();
    }
  }

  MergeTree tree(std::size_t particle) const override {
    return model_.tree(particles_[particle].state, n_);
  }

 private:
  struct Particle {
    State state;                // live clusters sorted by node id (merged ones are appended)
    std::vector<Row> rows;      // rows[x] belongs to state.live[x]
    std::uint32_t lineage = 0;  // the step-0 particle whose leaf-pair clocks this one has
  };

  // Key of the streams of the clocks in `row_cluster`'s row (see the top of this file).
  std::uint64_t clock_key(const Node& row_cluster, std::uint32_t lineage) const {
    if (row_cluster.id < n_) return (std::uint64_t{lineage} << 32) | row_cluster.id;
    return row_cluster.clock_key;
  }

  // Recomputes the row of live position x: its kListed best clocks and a bound on the rest.
  void rescan(Particle& particle, std::size_t x) const {
    const auto& live = particle.state.live;
    const Node& cluster = *live[x];
    // The laws of the row's pairs, in one batch where the Model has one (Brownian: the
    // distances by one call of the one-against-many kernel).
    thread_local std::vector<Law> laws;
    if constexpr (requires { model_.laws(cluster, live.data(), x, laws.data()); }) {
      laws.resize(x);
      model_.laws(cluster, live.data(), x, laws.data());
    } else {
      laws.clear();
      for (std::size_t y = 0; y < x; ++y) laws.push_back(model_.law(cluster, *live[y]));
    }
    // Candidates as (the Model's ranking: larger rings later, partner's live position), the
    // kSeeded highest ranked first. Selected as small pairs rather than with their laws: the
    // same comparisons, so the same order, with a third of the bytes moved.
    struct Candidate {
      double typical;
      std::uint32_t partner;
    };
    thread_local std::vector<Candidate> candidates;
    candidates.resize(x);
    for (std::size_t y = 0; y < x; ++y)
      candidates[y] = {model_.typical(laws[y]), static_cast<std::uint32_t>(y)};
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
      const Law& law = laws[candidates[i].partner];
      const Node& partner = *live[candidates[i].partner];
      // The uniform is drawn only when the skip test needs it or the clock is drawn.
      double skip_from = 1.0;  // skip when w >= skip_from
      double threshold = -kInf;
      if (i >= seeded && size >= kListed) {
        threshold = best[kListed - 1].time;
        skip_from = model_.not_after_threshold(law, threshold);
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
      insert({model_.clock(law, w, stream), static_cast<std::uint32_t>(partner.id)});
    }
    Row& row = particle.rows[x];
    row.count = static_cast<std::uint32_t>(std::min(size, kListed));
    std::copy_n(best.begin(), row.count, row.listed.begin());
    row.bound = std::max(size > kListed ? best[kListed].time : -kInf, skipped_bound);
  }

  // The live pair with the most recent clock.
  Selection select(Particle& particle) const {
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
      const auto partner =
          std::lower_bound(live.begin(), live.end(), partner_id,
                           [](const Node* c, std::size_t id) { return c->id < id; });
      return {winner, static_cast<std::size_t>(partner - live.begin()), key};
    }
  }

  // log alpha_k: the winner's N_C times the survival factors of the pairs its merge kills.
  double log_incremental_weight(const Particle& particle, const Selection& selection,
                                std::size_t step) const {
    const auto& live = particle.state.live;
    const double t = selection.time;
    const Node& a = *live[selection.row];
    const Node& b = *live[selection.partner];
    double log_alpha = model_.log_mass(a, b);
    if constexpr (requires {
                    model_.add_log_kill_factors(log_alpha, a, b, live, selection.row,
                                                selection.partner, t);
                  }) {
      // The same additions as below, with the factors computed in one batch.
      log_alpha =
          model_.add_log_kill_factors(log_alpha, a, b, live, selection.row, selection.partner, t);
    } else {
      for (std::size_t z = 0; z < live.size(); ++z) {
        if (z == selection.row || z == selection.partner) continue;
        for (const Node* merged : {&a, &b})
          log_alpha += model_.log_kill_factor(*merged, *live[z], t);
      }
    }
    if (!(log_alpha < kInf) || std::isnan(log_alpha)) {
      std::string message = "race step ";
      message += std::to_string(step + 1);
      message += ": the incremental weight is not finite";
      throw NumericalError(message);
    }
    return log_alpha;
  }

  // Applies the merge: the new cluster (keyed by this particle and step) replaces the pair,
  // the rows lose the merged partners, and the new cluster's row draws its clocks. Returns the
  // new cluster, for the pool.
  std::unique_ptr<Node> merge(Particle& particle, const Selection& selection, std::size_t step,
                              std::size_t index) const {
    auto& live = particle.state.live;
    auto& rows = particle.rows;
    const Node& a = *live[selection.row];
    const Node& b = *live[selection.partner];
    const double t = selection.time;
    const std::size_t id = n_ + step;
    auto merged = model_.merged(a, b, t, id, (std::uint64_t{index} << 32) | id);
    const std::size_t gone_a = a.id, gone_b = b.id;
    append_merge(particle.state.history, history_.node(index),
                 Merge{std::min(gone_a, gone_b), std::max(gone_a, gone_b), -t});
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
    live.push_back(merged.get());
    rows.emplace_back();
    rescan(particle, live.size() - 1);
    return merged;
  }

  Model model_;
  std::array<std::uint32_t, 2> clock_stream_key_;
  std::size_t n_;
  std::vector<Particle> particles_, next_;
  ClusterPool<Node> pool_;                      // every particle's clusters
  HistoryPool history_;                         // every particle's merges
  std::vector<std::unique_ptr<Node>> created_;  // by particle, in extend
};

}  // namespace kingman::detail::race
