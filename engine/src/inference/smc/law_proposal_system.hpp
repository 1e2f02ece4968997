#pragma once
// The proposals of MODEL.md section 5 for the models whose pair masses come from a duration law
// (adaptive_duration_law.hpp): the binary / multinomial model (discrete_smc.cpp) and the
// Brownian model with per-dimension messages (missing_smc.cpp). With m live clusters, lambda =
// m(m-1)/2 and current time T, each step merges a pair C after a duration delta, and the
// incremental weight is target over proposal, e^{-lambda delta} Z_C(T - delta) / f(delta, C):
//   PriorPost   delta ~ Exp(lambda), C ∝ Z_C(T - delta); alpha = (1/lambda) sum_C Z_C(T - delta).
//   PostPost    C ∝ G_C, delta | C ~ e^{-lambda delta} Z_C(T - delta) / G_C (exact inversion);
//               alpha = sum_C G_C, G_C = integral over [0, inf) of e^{-lambda delta} Z_C(T -
//               delta).
//   MPost1/2    C ∝ the model's approximate score, delta | C as PostPost's; alpha = G_C / q(C).
// (PriorPrior, delta ~ Exp(lambda) and C uniform with alpha = Z_C(T - delta), runs these models
// in its own system: prior_prior_system.hpp.)
// Each particle's randomness comes from the stream (seed, particle, step + 1), and every value
// a particle gets is a pure function of its state and its stream, so the thread count never
// changes a result.
//
// The model supplies (Model below stands for DiscreteProposalModel or MissingProposalModel):
//   Node, Law (an AdaptiveDurationLaw), Scratch (a task's reusable storage);
//   leaf_count(), fill_leaves(std::span<Node>) (the leaves, in nodes value-initialized in place);
//   merge(a, b, t, id, merged) -> log Z of the merge, the new node in `merged` (with
//     merge_work(), its rough cost, also what PriorPrior's system needs);
//   log_likelihood(scratch, a, b, t) -> log Z_C at merge time t (PriorPost), and optionally
//     likelihood_or_log(scratch, a, b, t, deferred): the same, or with `deferred` set Z_C itself
//     (a positive normal number), whose logs PriorPost takes a state at a time;
//   prepare_step(lambda): before a PostPost step's masses;
//   needs_law(scratch, a, b, T): whether the pair's mass comes from its law (step_pair_laws.hpp),
//     and optionally shares_pair_laws(): whether this step's states should share laws at all;
//   optionally log_score(scratch, a, b, lambda, T, proposal): MPost1's or MPost2's score, and
//     prepare_scores(live, proposal): called for a state's live clusters before its scores;
//   log_mass(scratch, a, b, lambda, T, law, built) -> log G_C, with `built` set when it was taken
//     from `law`, built for the pair;
//   optionally log_mass_or_sum(scratch, a, b, lambda, T, law, built, deferred): the same, or with
//     `deferred` set a positive normal S with log G_C = log S + deferred_log_offset(), whose logs
//     PostPost then takes a row at a time (kernels::log_array);
//   build_law(scratch, a, b, lambda, T, law).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../../scheduler/parallel_for.hpp"
#include "cluster_pool.hpp"
#include "history_pool.hpp"
#include "kingman/error.hpp"
#include "kingman/inference/smc.hpp"
#include "kingman/kernels/rng.hpp"
#include "kingman/kernels/vector_math.hpp"
#include "kingman/model/coalescent_prior.hpp"
#include "live_particle_state.hpp"
#include "pair_numbering.hpp"
#include "smc_loop.hpp"
#include "state_groups.hpp"
#include "step_pair_laws.hpp"

namespace kingman::detail {

namespace law_proposals {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Particles of one state handled by one PostPost drawing task (sharing its cache of chosen
// pairs' laws).
constexpr std::size_t kChunk = 16;
// A group of one particle keeps the laws of all its pairs up to this many pairs.
constexpr std::size_t kKeptLaws = 64;

// Index drawn with probability proportional to the increments of `cumulative` (nondecreasing,
// positive last value): the first index whose cumulative weight exceeds u times the total.
inline std::size_t draw_from_cumulative(const std::vector<double>& cumulative, double u) {
  const double target = u * cumulative.back();
  const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), target);
  return std::min<std::size_t>(static_cast<std::size_t>(it - cumulative.begin()),
                               cumulative.size() - 1);
}

// Turns log weights into cumulative relative weights exp(w - max) and returns log sum exp(w)
// (-inf when every weight is 0).
inline double cumulative_weights(const std::vector<double>& log_weights,
                                 std::vector<double>& cumulative) {
  const double maximum = *std::max_element(log_weights.begin(), log_weights.end());
  cumulative.resize(log_weights.size());
  if (maximum == -kInf) {
    for (std::size_t i = 0; i < cumulative.size(); ++i) cumulative[i] = static_cast<double>(i + 1);
    return -kInf;
  }
  if (!(maximum < kInf)) throw NumericalError("SMC: a pair has an infinite proposal weight");
  // The relative weights by exp_array (a libm exp per pair was 3.5 % of a binary PostPost run;
  // weights below e^-708 relative become 0, and a NaN stays NaN and fails the caller's check of
  // the total), then their running sums.
  for (std::size_t i = 0; i < log_weights.size(); ++i) cumulative[i] = log_weights[i] - maximum;
  kernels::exp_array(cumulative.data(), cumulative.data(), cumulative.size());
  double running = 0.0;
  for (double& value : cumulative) {
    running += value;
    value = running;
  }
  return maximum + std::log(running);
}

}  // namespace law_proposals

template <class Model>
class LawProposalSystem final : public ParticleSystem {
 public:
  using Node = typename Model::Node;
  using Law = typename Model::Law;
  using State = LiveParticleState<Node>;

  LawProposalSystem(Model model, const SmcOptions& options)
      : model_(std::move(model)),
        n_(model_.leaf_count()),
        proposal_(options.proposal),
        share_laws_(options.share_pair_laws),
        score_budget_bytes_(options.step_table_bytes),
        skip_negligible_(options.skip_negligible_pairs),
        seed_(options.seed),
        particles_(options.particles),
        next_(options.particles),
        shared_laws_(options.step_table_bytes) {
    if (proposal_ == Algorithm::priorprior || proposal_ == Algorithm::race)
      throw std::logic_error(
          "LawProposalSystem: PriorPrior and the race have systems of their own");
    std::vector<const Node*> leaves;
    for (const Node& leaf :
         pool_.keep_block(n_, [&](std::span<Node> nodes) { model_.fill_leaves(nodes); }))
      leaves.push_back(&leaf);
    for (State& p : particles_) p.live = leaves;
    if constexpr (requires { model_.node_bytes(proposal_); })
      pool_.limit(model_.node_bytes(proposal_), options.max_cluster_bytes);
  }

  void extend(std::size_t step, std::span<double> log_alpha) override {
    const std::size_t count = particles_.size();
    history_keys_.resize(count);
    for (std::size_t s = 0; s < count; ++s) history_keys_[s] = particles_[s].history;
    groups_.assign(std::span<const HistoryNode* const>(history_keys_));
    // Copies of a state list the same clusters: a sweep marks one list per group. (A binary
    // PriorPrior run at n = 2 000 with 256 particles, then in this system, swept every 2.4
    // steps, each sweep reading every particle's list: 17 % of its time on 1 thread, and on 2
    // threads the run's only split loop.)
    pool_.collect_if_due(
        count, groups_.size(), [&](std::size_t g) -> const auto& {
          return particles_[groups_.leader(g)].live;
        });
    created_.resize(particles_.size());
    history_.start_step(particles_.size(), [&](std::size_t s) { return particles_[s].history; });
    if (proposal_ == Algorithm::postpost || proposal_ == Algorithm::mpost1 ||
        proposal_ == Algorithm::mpost2) {
      extend_pair_scores(step, log_alpha);
    } else {
      extend_prior(step, log_alpha);
    }
    for (auto& cluster : created_) pool_.adopt(std::move(cluster));
    for (std::size_t s = 0; s < log_alpha.size(); ++s) {
      if (std::isnan(log_alpha[s])) {
        throw NumericalError("SMC step " + std::to_string(step + 1) + ": particle " +
                             std::to_string(s) + " has an undefined incremental weight");
      }
    }
  }

  // A copy moves the live list's m pointers: ~m / 4 in parallel_for.hpp's units. (At m, a
  // binary PriorPrior run at n = 2 000 with 256 particles, then in this system, split its
  // resamplings from m = 1 024 on, its only split loops: 2 threads took 23 % more CPU time than
  // 1, the worker spinning after each, and no less wall time.)
  void resample(std::span<const std::size_t> ancestors) override {
    resample_particles(particles_, next_, ancestors, particles_.front().live.size() / 4 + 1);
  }

  MergeTree tree(std::size_t particle) const override {
    return live_merge_tree(particles_[particle], n_);
  }

 private:
  // PriorPost: the duration comes first, from the prior.
  void extend_prior(std::size_t step, std::span<double> log_alpha) {
    const std::size_t m = n_ - step, pairs = m * (m - 1) / 2, id = n_ + step;
    const double lambda = coalescent_rate(m), log_lambda = std::log(lambda);
    const kernels::RandomStream::Key step_key = kernels::RandomStream::key(seed_, step + 1);
    parallel_for_range(0, particles_.size(), [&](const auto& range) {
      typename Model::Scratch scratch;
      std::vector<double> log_z(pairs), cumulative;
      DeferredLogs& deferred = DeferredLogs::of_this_thread();
      for (std::size_t s = range.begin(); s != range.end(); ++s) {
        State& state = particles_[s];
        kernels::RandomStream stream(seed_, s, step + 1, step_key);
        const double t = state.time - stream.exponential() / lambda;
        for (std::size_t x = 0, i = 0; x < m; ++x) {
          for (std::size_t y = x + 1; y < m; ++y, ++i) {
            const Node& a = *state.live[x];
            const Node& b = *state.live[y];
            if constexpr (requires { model_.likelihood_or_log(scratch, a, b, t, deferred.flag); }) {
              log_z[i] = model_.likelihood_or_log(scratch, a, b, t, deferred.flag);
              deferred.add(log_z[i]);
            } else {
              log_z[i] = model_.log_likelihood(scratch, a, b, t);
            }
          }
        }
        deferred.finish(0.0);
        // The proposal's pair mass is Z_C / sum Z; its duration density lambda e^{-lambda
        // delta} leaves 1 / lambda in the weight.
        log_alpha[s] = law_proposals::cumulative_weights(log_z, cumulative) - log_lambda;
        const auto [x, y] =
            unrank_pair(law_proposals::draw_from_cumulative(cumulative, stream.uniform()), m);
        merge_live(state, x, y, t, id, s);
      }
    });
  }

  // PostPost, MPost1 and MPost2: a pair C is drawn with probability q(C) ∝ its score, then its
  // duration exactly from its law, with alpha = G_C / q(C) = G_C sum_C' score_C' / score_C. For
  // PostPost the score is G_C itself, so alpha = sum_C G_C and no law is needed for it; MPost1
  // and MPost2 score pairs with the model's cheaper approximations (log_score) and take G_C from
  // the chosen pair's law. The scores depend only on the state, so particles that are resampled
  // copies of one state (same history) share them: extend grouped the particles by state, in
  // particle order. A group of several particles gets its scores computed once, in parallel over
  // its pairs; a group of one particle (every group, between resamplings) computes them in its own
  // task and keeps PostPost's laws (when there are few pairs), so the chosen pair's law is not
  // built twice.
  void extend_pair_scores(std::size_t step, std::span<double> log_alpha) {
    const std::size_t m = n_ - step, pairs = m * (m - 1) / 2;
    const double lambda = coalescent_rate(m);
    const kernels::RandomStream::Key step_key = kernels::RandomStream::key(seed_, step + 1);
    // The model's per-step parts (the binary model's Gauss-Jacobi rule for this lambda).
    model_.prepare_step(lambda);

    const std::size_t groups = groups_.size();
    const std::vector<std::size_t>& members = groups_.members();
    auto member_begin = [&](std::size_t g) { return groups_.member_begin(g); };
    // PostPost: which pairs' masses can matter, by the model's bounds (mark_needed_pairs).
    needed_ready_ = false;
    if constexpr (kHasMassBound) {
      if (proposal_ == Algorithm::postpost && skip_negligible_ &&
          groups * (m * (m - 1) / 2) <= score_budget_bytes_) {
        mark_needed_pairs(m, lambda);
        needed_ready_ = true;
      }
    }
    // PostPost: the laws of the pairs that several states list, built once (step_pair_laws.hpp).
    shared_laws_ready_ = false;
    bool share_laws = proposal_ == Algorithm::postpost && share_laws_ && groups >= 2;
    if constexpr (requires { model_.shares_pair_laws(); })
      share_laws = share_laws && model_.shares_pair_laws();
    if (share_laws) {
      leaders_.resize(groups);
      for (std::size_t g = 0; g < groups; ++g) leaders_[g] = &particles_[groups_.leader(g)];
      shared_laws_ready_ = shared_laws_.prepare(model_, std::span<const State* const>(leaders_),
                                                lambda, needed_ready_ ? &needed_ : nullptr);
    }

    // Shared masses of the groups of several particles, in batches that fit the budget.
    std::vector<std::size_t> shared;  // groups of several particles
    for (std::size_t g = 0; g < groups; ++g)
      if (member_begin(g + 1) - member_begin(g) > 1) shared.push_back(g);
    std::vector<std::size_t> slot_of(groups, 0);  // group -> its row in the shared scratch
    const std::size_t batch =
        std::max<std::size_t>(1, score_budget_bytes_ / (2 * sizeof(double) * pairs));
    for (std::size_t b0 = 0; b0 < std::max<std::size_t>(shared.size(), 1); b0 += batch) {
      const std::size_t b1 = std::min(shared.size(), b0 + batch);
      const std::size_t rows = b1 > b0 ? b1 - b0 : 0;
      log_mass_.resize(std::max(log_mass_.size(), rows));
      cumulative_.resize(std::max(cumulative_.size(), rows));
      log_total_.resize(std::max(log_total_.size(), rows));
      for (std::size_t k = b0; k < b1; ++k) {
        slot_of[shared[k]] = k - b0;
        log_mass_[k - b0].resize(pairs);
      }
      if constexpr (requires { model_.prepare_scores(particles_.front().live, proposal_); }) {
        parallel_for_range(0, rows, [&](const auto& range) {
          for (std::size_t row = range.begin(); row != range.end(); ++row)
            model_.prepare_scores(particles_[groups_.leader(shared[b0 + row])].live, proposal_);
        });
      }
      parallel_for_range(0, rows * pairs, [&](const auto& range) {
        typename Model::Scratch pair_scratch;
        Law law;
        bool built = false;
        DeferredLogs& deferred = DeferredLogs::of_this_thread();
        for (std::size_t item = range.begin(); item != range.end(); ++item) {
          const std::size_t row = item / pairs, i = item % pairs;
          const State& state = particles_[groups_.leader(shared[b0 + row])];
          const auto [x, y] = unrank_pair(i, m);
          double& score = log_mass_[row][i];
          score = pair_score(pair_scratch, shared[b0 + row], state, i, x, y, lambda, law, built,
                             &deferred.flag);
          deferred.add(score);
        }
        deferred.finish(deferred_log_offset());
      });
      for (std::size_t row = 0; row < rows; ++row)
        log_total_[row] = checked_total(log_mass_[row], cumulative_[row], step);

      // Tasks: chunks of up to law_proposals::kChunk particles of one shared group of this batch,
      // and (with the last batch) every group of one particle.
      std::vector<std::pair<std::size_t, std::size_t>> tasks;  // [begin, end) in `members`
      for (std::size_t k = b0; k < b1; ++k) {
        const std::size_t g = shared[k];
        for (std::size_t b = member_begin(g); b < member_begin(g + 1); b += law_proposals::kChunk)
          tasks.emplace_back(b, std::min(b + law_proposals::kChunk, member_begin(g + 1)));
      }
      if (b1 == shared.size()) {
        for (std::size_t g = 0; g < groups; ++g)
          if (member_begin(g + 1) - member_begin(g) == 1)
            tasks.emplace_back(member_begin(g), member_begin(g + 1));
      }
      parallel_for_range(0, tasks.size(), [&](const auto& range) {
        PostPostScratch scratch;
        for (std::size_t task = range.begin(); task != range.end(); ++task) {
          const std::size_t g = groups_.group_of(members[tasks[task].first]);
          const bool single = member_begin(g + 1) - member_begin(g) == 1;
          scratch.chosen.clear();
          if (single) {
            compute_masses(g, particles_[members[tasks[task].first]], m, lambda, step, scratch);
          } else {
            scratch.laws_kept = false;  // laws kept for another state must not be used
          }
          const std::vector<double>& cumulative =
              single ? scratch.cumulative : cumulative_[slot_of[g]];
          const std::vector<double>& scores = single ? scratch.log_mass : log_mass_[slot_of[g]];
          const double log_total = single ? scratch.log_total : log_total_[slot_of[g]];
          for (std::size_t k = tasks[task].first; k < tasks[task].second; ++k) {
            const std::size_t s = members[k];
            State& state = particles_[s];
            kernels::RandomStream stream(seed_, s, step + 1, step_key);
            const std::size_t i = law_proposals::draw_from_cumulative(cumulative, stream.uniform());
            const auto [x, y] = unrank_pair(i, m);
            const Law& law = law_of(state, i, x, y, lambda, scratch);
            const double delta = law.draw(stream.uniform());
            merge_live(state, x, y, state.time - delta, n_ + step, s);
            log_alpha[s] = proposal_ == Algorithm::postpost
                               ? log_total
                               : law.log_mass() - scores[i] + log_total;
          }
        }
      });
    }
  }

  // Values whose logs the model left to the caller (PostPost's log_mass_or_sum through
  // pair_score, PriorPost's likelihood_or_log): `flag` is set by the model, add() then keeps the
  // value's place if it was set, and finish() takes every kept value's log at once, adding an
  // offset (the model's deferred_log_offset for masses). log_array's value for an element does not
  // depend on the others in its call, so the scores do not depend on how pairs are batched.
  struct DeferredLogs {
    bool flag = false;
    std::vector<double*> places;
    std::vector<double> sums;

    // This thread's instance, emptied, for one task (no task of the loops that use it waits for
    // others, so no other task can take it meanwhile): its buffers keep their capacity across
    // tasks and steps. (One per task grew its buffers anew each time, and the worker's heap
    // returned the pages and faulted them in again: 49 000 page faults, and binary PriorPost on 2
    // threads cost 8.7 % more CPU time than on 1 instead of 1.9 %.)
    static DeferredLogs& of_this_thread() {
      thread_local DeferredLogs logs;
      logs.flag = false;
      logs.places.clear();
      return logs;
    }

    void add(double& score) {
      if (flag) places.push_back(&score);
      flag = false;
    }
    void finish(double offset) {
      if (places.empty()) return;
      sums.resize(places.size());
      for (std::size_t k = 0; k < places.size(); ++k) sums[k] = *places[k];
      kernels::log_array(sums.data(), sums.data(), sums.size());
      for (std::size_t k = 0; k < places.size(); ++k) *places[k] = sums[k] + offset;
      places.clear();
    }
  };

  // A task's PostPost scratch: for a group of one particle, its masses (and, with at most
  // law_proposals::kKeptLaws pairs, the laws themselves); the laws of the pairs chosen so far. A
  // law is a pure function of state and pair, so reusing one never changes a value.
  struct PostPostScratch {
    typename Model::Scratch pair;
    std::vector<Law> laws;  // every pair's law, when kept
    bool laws_kept = false;
    std::vector<double> log_mass, cumulative;
    double log_total = 0.0;
    std::vector<std::pair<std::size_t, Law>> chosen;
  };

  void compute_masses(std::size_t group, const State& state, std::size_t m, double lambda,
                      std::size_t step, PostPostScratch& scratch) const {
    const std::size_t pairs = m * (m - 1) / 2;
    // Laws are kept for the draw only where every mass was taken from its law anyway.
    const bool keep = pairs <= law_proposals::kKeptLaws;
    scratch.laws.resize(keep ? pairs : 1);
    scratch.log_mass.resize(pairs);
    scratch.laws_kept = keep;
    if constexpr (requires { model_.prepare_scores(state.live, proposal_); })
      model_.prepare_scores(state.live, proposal_);
    DeferredLogs& deferred = DeferredLogs::of_this_thread();
    for (std::size_t x = 0, i = 0; x < m; ++x) {
      for (std::size_t y = x + 1; y < m; ++y, ++i) {
        Law& law = scratch.laws[keep ? i : 0];
        bool built = false;
        scratch.log_mass[i] =
            pair_score(scratch.pair, group, state, i, x, y, lambda, law, built, &deferred.flag);
        deferred.add(scratch.log_mass[i]);
        scratch.laws_kept = scratch.laws_kept && built;
      }
    }
    deferred.finish(deferred_log_offset());
    scratch.log_total = checked_total(scratch.log_mass, scratch.cumulative, step);
  }

  const Law& law_of(const State& state, std::size_t i, std::size_t x, std::size_t y, double lambda,
                    PostPostScratch& scratch) const {
    if (scratch.laws_kept) return scratch.laws[i];
    for (const auto& [index, law] : scratch.chosen)
      if (index == i) return law;
    auto& [index, law] = scratch.chosen.emplace_back(i, Law());
    model_.build_law(scratch.pair, *state.live[x], *state.live[y], lambda, state.time, law);
    return law;
  }

  // The log score of pair i, at live positions x, y of `state` (of group `group`): PostPost's
  // G_C (0 where it cannot matter, from the step's shared law, or model_.log_mass), or the
  // model's MPost1 / MPost2 approximation (no law built).
  double pair_score(typename Model::Scratch& scratch, std::size_t group, const State& state,
                    std::size_t i, std::size_t x, std::size_t y, double lambda, Law& law,
                    bool& built, bool* deferred = nullptr) const {
    const Node& a = *state.live[x];
    const Node& b = *state.live[y];
    const double time = state.time;
    built = false;
    if (proposal_ == Algorithm::postpost) {
      if (needed_ready_ && !needed_[group][i]) return -law_proposals::kInf;
      double shared_mass;
      if (shared_laws_ready_ && shared_laws_.log_mass(group, x, y, time, shared_mass))
        return shared_mass;
      if constexpr (kDefersLogs) {
        if (deferred)
          return model_.log_mass_or_sum(scratch, a, b, lambda, time, law, built, *deferred);
      }
      return model_.log_mass(scratch, a, b, lambda, time, law, built);
    }
    if constexpr (requires { model_.log_score(scratch, a, b, lambda, time, proposal_); }) {
      return model_.log_score(scratch, a, b, lambda, time, proposal_);
    } else {
      throw std::logic_error("LawProposalSystem: the model has no MPost1 / MPost2 scores");
    }
  }

  // What DeferredLogs::finish adds to the logs of the masses pair_score left to its caller.
  double deferred_log_offset() const {
    if constexpr (kDefersLogs) {
      return model_.deferred_log_offset();
    } else {
      return 0.0;
    }
  }

  // PostPost's pairs whose masses can matter, by state (a byte per state and pair, within
  // score_budget_bytes_; beyond it every mass is computed): most pairs of a step
  // lie so far apart that their masses are below e^-46 / (pair count) of the state's total
  // (81 % of them for 100 x 10 with 10 % of entries missing). The model's upper bound on log G_C
  // (log_mass_bound, a few operations) tells most of them: with L the exact mass of the pair of
  // largest bound, a pair whose bound lies below L - 46 - log(pairs) is left out, its mass taken
  // as 0. The masses left out then sum to at most e^-46 ~ 1e-20 of the total, far below its
  // rounding, and a left-out pair would have been drawn with probability below 1e-20.
  void mark_needed_pairs(std::size_t m, double lambda) {
    constexpr double kNegligible = 46.0;
    const std::size_t pairs = m * (m - 1) / 2, groups = groups_.size();
    needed_.resize(groups);
    parallel_for_range(0, groups, [&](const auto& range) {
      typename Model::Scratch scratch;
      Law law;
      thread_local std::vector<double> bounds;
      for (std::size_t g = range.begin(); g != range.end(); ++g) {
        const State& state = particles_[groups_.leader(g)];
        bounds.resize(pairs);
        std::size_t best = 0;
        for (std::size_t x = 0, i = 0; x < m; ++x) {
          for (std::size_t y = x + 1; y < m; ++y, ++i) {
            bounds[i] =
                model_.log_mass_bound(scratch, *state.live[x], *state.live[y], lambda, state.time);
            if (bounds[i] > bounds[best]) best = i;
          }
        }
        const auto [bx, by] = unrank_pair(best, m);
        bool built = false;
        const double cutoff = model_.log_mass(scratch, *state.live[bx], *state.live[by], lambda,
                                              state.time, law, built) -
                              kNegligible - std::log(static_cast<double>(pairs));
        std::vector<std::uint8_t>& need = needed_[g];
        need.resize(pairs);
        for (std::size_t i = 0; i < pairs; ++i) need[i] = !(bounds[i] < cutoff);
        need[best] = 1;
      }
    });
  }

  // Merges live positions x < y of `state` (particle s's) at time t as node `id`; returns
  // log Z of the merge.
  double merge_live(State& state, std::size_t x, std::size_t y, double t, std::size_t id,
                    std::size_t s) {
    std::unique_ptr<Node> merged;
    const double log_z = model_.merge(*state.live[x], *state.live[y], t, id, merged);
    record_merge(state, x, y, std::move(merged), created_[s], history_.node(s));
    return log_z;
  }

  static double checked_total(const std::vector<double>& log_mass, std::vector<double>& cumulative,
                              std::size_t step) {
    const double log_total = law_proposals::cumulative_weights(log_mass, cumulative);
    if (!std::isfinite(log_total)) {
      throw NumericalError("SMC step " + std::to_string(step + 1) +
                           ": the pair scores are not finite");
    }
    return log_total;
  }

  Model model_;
  std::size_t n_;
  Algorithm proposal_;
  bool share_laws_;  // PostPost: SmcOptions::share_pair_laws
  // Memory for the pair masses of the states scored at once, and for the needed pairs
  // (SmcOptions::step_table_bytes).
  std::size_t score_budget_bytes_;
  bool skip_negligible_;  // PostPost: SmcOptions::skip_negligible_pairs
  std::uint64_t seed_;
  std::vector<State> particles_, next_;
  ClusterPool<Node> pool_;                        // every particle's clusters
  std::vector<std::unique_ptr<Node>> created_;    // by particle, in extend
  HistoryPool history_;                           // every particle's merges
  std::vector<const HistoryNode*> history_keys_;  // by particle, in extend
  StateGroups groups_;                            // of particles, in extend
  std::vector<const State*> leaders_;             // a state per group (PostPost)
  StepPairLaws<Model> shared_laws_;               // this step's shared laws (PostPost)
  bool shared_laws_ready_ = false;
  // Whether the model leaves PostPost's logs of pair masses to the caller (log_mass_or_sum).
  static constexpr bool kDefersLogs = requires(const Model& model, typename Model::Scratch& scratch,
                                               const Node& node, Law& law, bool& flag) {
    model.log_mass_or_sum(scratch, node, node, 1.0, 0.0, law, flag, flag);
    model.deferred_log_offset();
  };
  // PostPost with the model's mass bounds: by group, by pair, whether its mass can matter.
  static constexpr bool kHasMassBound =
      requires(const Model& model, typename Model::Scratch& scratch, const Node& node) {
    model.log_mass_bound(scratch, node, node, 1.0, 0.0);
  };
  std::vector<std::vector<std::uint8_t>> needed_;
  bool needed_ready_ = false;
  // PostPost scratch, per group of the current batch: log G_C of every pair, cumulative
  // relative masses, log sum_C G_C.
  std::vector<std::vector<double>> log_mass_, cumulative_;
  std::vector<double> log_total_;
};

}  // namespace kingman::detail
