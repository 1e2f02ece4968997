// SMC for the binary / multinomial model: the proposals of MODEL.md section 5 on the messages of
// section 7, run by the shared SMC loop (smc_loop.hpp). With m live clusters, lambda =
// m(m-1)/2 and current time T, each step merges a pair C after a duration delta, and the
// incremental weight is target over proposal, e^{-lambda delta} Z_C(T - delta) / f(delta, C):
//   PriorPrior: delta ~ Exp(lambda), C uniform:          alpha = Z_C(T - delta);
//   PriorPost:  delta ~ Exp(lambda), C ∝ Z_C(T - delta):  alpha = (1 / lambda) sum_C Z_C(T -
//   delta); PostPost:   C ∝ G_C, delta | C ~ e^{-lambda delta} Z_C(T - delta) / G_C (exact
//   inversion):
//               alpha = sum_C G_C, G_C = integral over [0, inf) of e^{-lambda delta} Z_C(T - delta)
//               (the mass of the pair's DiscreteDurationLaw; with one mutation rate a
//               Gauss-Jacobi sum, discrete_pair_mass.hpp).
// Each particle's randomness comes from the stream (seed, particle, step + 1), and every value
// a particle gets is a pure function of its state and its stream, so the thread count never
// changes a result.
#include "kingman/inference/discrete_smc.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../../model/discrete_duration_law.hpp"
#include "../../model/discrete_pair_mass.hpp"
#include "../../scheduler/parallel_for.hpp"
#include "../../scheduler/run_arena.hpp"
#include "cluster_pool.hpp"
#include "discrete_particle_state.hpp"
#include "kingman/error.hpp"
#include "kingman/kernels/rng.hpp"
#include "kingman/model/coalescent_prior.hpp"
#include "race_discrete.hpp"
#include "smc_loop.hpp"
#include "state_groups.hpp"

namespace kingman {

namespace detail {

std::vector<std::unique_ptr<DiscreteClusterNode>> discrete_leaves(const DiscreteData& data) {
  const DiscreteMessages messages(data);
  const std::size_t width = data.d * data.categories;
  std::vector<std::unique_ptr<DiscreteClusterNode>> leaves(data.n);
  for (std::size_t i = 0; i < data.n; ++i) {
    auto leaf = std::make_unique<DiscreteClusterNode>();
    const DiscreteClusterView view = messages.cluster(i);
    leaf->id = i;
    leaf->time = view.time;
    leaf->message.assign(view.message, view.message + width);
    leaf->observed.assign(view.observed, view.observed + data.d);
    leaves[i] = std::move(leaf);
  }
  return leaves;
}

double merge_live_pair(const DiscreteData& data, DiscreteParticleState& state, std::size_t x,
                       std::size_t y, double t, std::size_t id,
                       std::unique_ptr<DiscreteClusterNode>& created) {
  const DiscreteClusterNode& a = *state.live[x];
  const DiscreteClusterNode& b = *state.live[y];
  auto merged = std::make_unique<DiscreteClusterNode>();
  merged->id = id;
  merged->time = t;
  merged->message.resize(data.d * data.categories);
  merged->observed.resize(data.d);
  const double log_z = merge_discrete_clusters(data, a.view(), b.view(), t, merged->message.data(),
                                               merged->observed.data());
  auto node = std::make_shared<HistoryNode>();
  node->merge = Merge{std::min(a.id, b.id), std::max(a.id, b.id), -t};
  node->previous = std::move(state.history);
  state.history = std::move(node);
  state.live[x] = merged.get();
  state.live.erase(state.live.begin() + static_cast<std::ptrdiff_t>(y));
  state.time = t;
  created = std::move(merged);
  return log_z;
}

MergeTree discrete_merge_tree(const DiscreteParticleState& state, std::size_t leaf_count) {
  MergeTree tree;
  tree.leaf_count = leaf_count;
  for (const HistoryNode* node = state.history.get(); node; node = node->previous.get())
    tree.merges.push_back(node->merge);
  std::reverse(tree.merges.begin(), tree.merges.end());
  return tree;
}

}  // namespace detail

namespace {

using detail::DiscreteClusterNode;
using detail::DiscreteParticleState;

constexpr double kInf = std::numeric_limits<double>::infinity();
// Particles of one state handled by one PostPost drawing task (sharing its cache of chosen
// pairs' laws).
constexpr std::size_t kChunk = 16;
// A group of one particle keeps the laws of all its pairs up to this many pairs.
constexpr std::size_t kKeptLaws = 64;
// Memory for the pair masses of the PostPost states processed at once.
constexpr std::size_t kScoreBudgetBytes = std::size_t{64} << 20;

void check(const DiscreteData& data, const SmcOptions& options) {
  const Algorithm a = options.proposal;
  if (a != Algorithm::priorprior && a != Algorithm::priorpost && a != Algorithm::postpost &&
      a != Algorithm::race) {
    std::string message = "algorithm ";
    message += to_string(a);
    message +=
        " is not available for the binary or multinomial likelihood; use priorprior, priorpost, "
        "postpost or race";
    throw OptionError(message);
  }
  if (options.particles < 1) throw OptionError("--particles must be at least 1");
  if (!(options.ess_threshold >= 0.0 && options.ess_threshold <= 1.0))
    throw OptionError("--ess-threshold must be in [0, 1]");
  if (data.n < 2) throw InputError("SMC needs at least two points");
}

// The live pair with lexicographic index `index` among the positions x < y of m clusters.
std::pair<std::size_t, std::size_t> pair_at(std::size_t index, std::size_t m) {
  std::size_t x = 0;
  while (index >= m - 1 - x) index -= m - 1 - x++;
  return {x, x + 1 + index};
}

// Index drawn with probability proportional to the increments of `cumulative` (nondecreasing,
// positive last value): the first index whose cumulative weight exceeds u times the total.
std::size_t draw_from_cumulative(const std::vector<double>& cumulative, double u) {
  const double target = u * cumulative.back();
  const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), target);
  return std::min<std::size_t>(static_cast<std::size_t>(it - cumulative.begin()),
                               cumulative.size() - 1);
}

// Turns log weights into cumulative relative weights exp(w - max) and returns log sum exp(w)
// (-inf when every weight is 0).
double cumulative_weights(const std::vector<double>& log_weights, std::vector<double>& cumulative) {
  const double maximum = *std::max_element(log_weights.begin(), log_weights.end());
  cumulative.resize(log_weights.size());
  if (maximum == -kInf) {
    for (std::size_t i = 0; i < cumulative.size(); ++i) cumulative[i] = static_cast<double>(i + 1);
    return -kInf;
  }
  if (!(maximum < kInf)) throw NumericalError("SMC: a pair has an infinite proposal weight");
  double running = 0.0;
  for (std::size_t i = 0; i < log_weights.size(); ++i) {
    running += std::exp(log_weights[i] - maximum);
    cumulative[i] = running;
  }
  return maximum + std::log(running);
}

class DiscreteProposalSystem final : public detail::ParticleSystem {
 public:
  DiscreteProposalSystem(const DiscreteData& data, const SmcOptions& options)
      : data_(data),
        proposal_(options.proposal),
        seed_(options.seed),
        particles_(options.particles),
        next_(options.particles),
        common_mutation_rate_(
            std::all_of(data.mutation_rate.begin(), data.mutation_rate.end(),
                        [&](double rate) { return rate == data.mutation_rate.front(); })) {
    std::vector<const DiscreteClusterNode*> leaves;
    for (auto& leaf : detail::discrete_leaves(data)) leaves.push_back(pool_.keep(std::move(leaf)));
    for (DiscreteParticleState& p : particles_) p.live = leaves;
  }

  void extend(std::size_t step, std::span<double> log_alpha) override {
    pool_.collect_if_due(
        particles_.size(),
        particles_.size(), [&](std::size_t s) -> const auto& { return particles_[s].live; });
    created_.resize(particles_.size());
    if (proposal_ == Algorithm::postpost) {
      extend_postpost(step, log_alpha);
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

  void resample(std::span<const std::size_t> ancestors) override {
    detail::resample_particles(particles_, next_, ancestors, particles_.front().live.size());
  }

  MergeTree tree(std::size_t particle) const override {
    return detail::discrete_merge_tree(particles_[particle], data_.n);
  }

 private:
  // PriorPrior and PriorPost: the duration comes first, from the prior.
  void extend_prior(std::size_t step, std::span<double> log_alpha) {
    const std::size_t m = data_.n - step, pairs = m * (m - 1) / 2, id = data_.n + step;
    const double lambda = coalescent_rate(m), log_lambda = std::log(lambda);
    const kernels::RandomStream::Key step_key = kernels::RandomStream::key(seed_, step + 1);
    detail::parallel_for_range(0, particles_.size(), [&](const auto& range) {
      DiscretePair pair;
      std::vector<double> log_z(pairs), cumulative;
      for (std::size_t s = range.begin(); s != range.end(); ++s) {
        DiscreteParticleState& state = particles_[s];
        kernels::RandomStream stream(seed_, s, step + 1, step_key);
        const double t = state.time - stream.exponential() / lambda;
        if (proposal_ == Algorithm::priorprior) {
          const auto [x, y] = pair_at(stream.below(pairs), m);
          log_alpha[s] = detail::merge_live_pair(data_, state, x, y, t, id, created_[s]);
          continue;
        }
        for (std::size_t x = 0, i = 0; x < m; ++x) {
          for (std::size_t y = x + 1; y < m; ++y, ++i) {
            pair.assign(data_, state.live[x]->view(), state.live[y]->view());
            log_z[i] = pair.log_local_likelihood(t);
          }
        }
        // The proposal's pair mass is Z_C / sum Z; its duration density lambda e^{-lambda
        // delta} leaves 1 / lambda in the weight.
        log_alpha[s] = cumulative_weights(log_z, cumulative) - log_lambda;
        const auto [x, y] = pair_at(draw_from_cumulative(cumulative, stream.uniform()), m);
        detail::merge_live_pair(data_, state, x, y, t, id, created_[s]);
      }
    });
  }

  // PostPost: the pair masses G_C depend only on the state, so particles that are resampled
  // copies of one state (same history) share them: group particles by state, in particle
  // order. A group of several particles gets its masses computed once, in parallel over its
  // pairs; a group of one particle (every group, between resamplings) computes them in its own
  // task and keeps the laws (when there are few pairs), so the chosen pair's law is not built
  // twice.
  void extend_postpost(std::size_t step, std::span<double> log_alpha) {
    const std::size_t count = particles_.size();
    const std::size_t m = data_.n - step, pairs = m * (m - 1) / 2;
    const double lambda = coalescent_rate(m);
    const kernels::RandomStream::Key step_key = kernels::RandomStream::key(seed_, step + 1);
    // With one mutation rate every pair's mass is a Gauss-Jacobi sum with this step's rule
    // (discrete_pair_mass.hpp); the adaptive law is then built only for the chosen pairs.
    masses_.reset();
    if (common_mutation_rate_ && DiscretePairMasses::supports(lambda, data_.mutation_rate.front()))
      masses_.emplace(lambda, data_.mutation_rate.front(), data_.d);
    const DiscretePairMasses* masses = masses_ ? &*masses_ : nullptr;

    history_keys_.resize(count);
    for (std::size_t s = 0; s < count; ++s) history_keys_[s] = particles_[s].history.get();
    groups_.assign(std::span<const detail::HistoryNode* const>(history_keys_));
    const std::size_t groups = groups_.size();
    const std::vector<std::size_t>& members = groups_.members();
    auto member_begin = [&](std::size_t g) { return groups_.member_begin(g); };

    // Shared masses of the groups of several particles, in batches that fit the budget.
    std::vector<std::size_t> shared;  // groups of several particles
    for (std::size_t g = 0; g < groups; ++g)
      if (member_begin(g + 1) - member_begin(g) > 1) shared.push_back(g);
    std::vector<std::size_t> slot_of(groups, 0);  // group -> its row in the shared scratch
    const std::size_t batch =
        std::max<std::size_t>(1, kScoreBudgetBytes / (2 * sizeof(double) * pairs));
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
      detail::parallel_for_range(0, rows * pairs, [&](const auto& range) {
        DiscretePair pair;
        DiscreteDurationLaw law;
        for (std::size_t item = range.begin(); item != range.end(); ++item) {
          const std::size_t row = item / pairs, i = item % pairs;
          const DiscreteParticleState& state = particles_[groups_.leader(shared[b0 + row])];
          const auto [x, y] = pair_at(i, m);
          pair.assign(data_, state.live[x]->view(), state.live[y]->view());
          log_mass_[row][i] = pair_log_mass(pair, lambda, state.time, masses, law);
        }
      });
      for (std::size_t row = 0; row < rows; ++row)
        log_total_[row] = checked_total(log_mass_[row], cumulative_[row], step);

      // Tasks: chunks of up to kChunk particles of one shared group of this batch, and (with
      // the last batch) every group of one particle.
      std::vector<std::pair<std::size_t, std::size_t>> tasks;  // [begin, end) in `members`
      for (std::size_t k = b0; k < b1; ++k) {
        const std::size_t g = shared[k];
        for (std::size_t b = member_begin(g); b < member_begin(g + 1); b += kChunk)
          tasks.emplace_back(b, std::min(b + kChunk, member_begin(g + 1)));
      }
      if (b1 == shared.size()) {
        for (std::size_t g = 0; g < groups; ++g)
          if (member_begin(g + 1) - member_begin(g) == 1)
            tasks.emplace_back(member_begin(g), member_begin(g + 1));
      }
      detail::parallel_for_range(0, tasks.size(), [&](const auto& range) {
        PostPostScratch scratch;
        for (std::size_t task = range.begin(); task != range.end(); ++task) {
          const std::size_t g = groups_.group_of(members[tasks[task].first]);
          const bool single = member_begin(g + 1) - member_begin(g) == 1;
          scratch.chosen.clear();
          if (single) {
            compute_masses(particles_[members[tasks[task].first]], m, lambda, step, masses,
                           scratch);
          } else {
            scratch.laws_kept = false;  // laws kept for another state must not be used
          }
          const std::vector<double>& cumulative =
              single ? scratch.cumulative : cumulative_[slot_of[g]];
          const double log_total = single ? scratch.log_total : log_total_[slot_of[g]];
          for (std::size_t k = tasks[task].first; k < tasks[task].second; ++k) {
            const std::size_t s = members[k];
            DiscreteParticleState& state = particles_[s];
            kernels::RandomStream stream(seed_, s, step + 1, step_key);
            const std::size_t i = draw_from_cumulative(cumulative, stream.uniform());
            const auto [x, y] = pair_at(i, m);
            const DiscreteDurationLaw& law = law_of(state, i, x, y, lambda, scratch);
            const double delta = law.draw(stream.uniform());
            detail::merge_live_pair(data_, state, x, y, state.time - delta, data_.n + step,
                                    created_[s]);
            log_alpha[s] = log_total;
          }
        }
      });
    }
  }

  // A task's PostPost scratch: for a group of one particle, its masses (and, with at most
  // kKeptLaws pairs, the laws themselves); the laws of the pairs chosen so far. A law is a pure
  // function of state and pair, so reusing one never changes a value.
  struct PostPostScratch {
    DiscretePair pair;
    std::vector<DiscreteDurationLaw> laws;  // every pair's law, when kept
    bool laws_kept = false;
    std::vector<double> log_mass, cumulative;
    double log_total = 0.0;
    std::vector<std::pair<std::size_t, DiscreteDurationLaw>> chosen;
  };

  void compute_masses(const DiscreteParticleState& state, std::size_t m, double lambda,
                      std::size_t step, const DiscretePairMasses* masses,
                      PostPostScratch& scratch) const {
    const std::size_t pairs = m * (m - 1) / 2;
    // Laws are kept for the draw only where they are built for the masses anyway.
    scratch.laws_kept = !masses && pairs <= kKeptLaws;
    scratch.laws.resize(scratch.laws_kept ? pairs : 1);
    scratch.log_mass.resize(pairs);
    for (std::size_t x = 0, i = 0; x < m; ++x) {
      for (std::size_t y = x + 1; y < m; ++y, ++i) {
        DiscreteDurationLaw& law = scratch.laws[scratch.laws_kept ? i : 0];
        scratch.pair.assign(data_, state.live[x]->view(), state.live[y]->view());
        scratch.log_mass[i] = pair_log_mass(scratch.pair, lambda, state.time, masses, law);
      }
    }
    scratch.log_total = checked_total(scratch.log_mass, scratch.cumulative, step);
  }

  const DiscreteDurationLaw& law_of(const DiscreteParticleState& state, std::size_t i,
                                    std::size_t x, std::size_t y, double lambda,
                                    PostPostScratch& scratch) const {
    if (scratch.laws_kept) return scratch.laws[i];
    for (const auto& [index, law] : scratch.chosen)
      if (index == i) return law;
    scratch.pair.assign(data_, state.live[x]->view(), state.live[y]->view());
    return scratch.chosen.emplace_back(i, DiscreteDurationLaw(scratch.pair, lambda, state.time))
        .second;
  }

  // log G_C: the exact Gauss-Jacobi sum where the step's rule covers the pair, else the adaptive
  // quadrature of its law (built into `law`). The two agree to ~1e-13
  // (tests/engine/discrete_pair_mass_test.cpp).
  static double pair_log_mass(const DiscretePair& pair, double lambda, double time,
                              const DiscretePairMasses* masses, DiscreteDurationLaw& law) {
    if (masses && masses->handles(pair)) return masses->log_mass(pair, time);
    law.assign(pair, lambda, time);
    return law.log_mass();
  }

  static double checked_total(const std::vector<double>& log_mass, std::vector<double>& cumulative,
                              std::size_t step) {
    const double log_total = cumulative_weights(log_mass, cumulative);
    if (!std::isfinite(log_total)) {
      throw NumericalError("SMC step " + std::to_string(step + 1) +
                           ": the pair masses of PostPost are not finite");
    }
    return log_total;
  }

  const DiscreteData& data_;
  Algorithm proposal_;
  std::uint64_t seed_;
  std::vector<DiscreteParticleState> particles_, next_;
  detail::ClusterPool<DiscreteClusterNode> pool_;              // every particle's clusters
  std::vector<std::unique_ptr<DiscreteClusterNode>> created_;  // by particle, in extend
  std::vector<const detail::HistoryNode*> history_keys_;       // by particle (PostPost)
  detail::StateGroups groups_;                                 // of particles (PostPost)
  bool common_mutation_rate_;                                  // one rate for every column
  std::optional<DiscretePairMasses> masses_;                   // this step's (PostPost)
  // PostPost scratch, per group of the current batch: log G_C of every pair, cumulative
  // relative masses, log sum_C G_C.
  std::vector<std::vector<double>> log_mass_, cumulative_;
  std::vector<double> log_total_;
};

}  // namespace

SmcResult run_smc(const DiscreteData& data, const SmcOptions& options) {
  check(data, options);
  const auto start = std::chrono::steady_clock::now();
  detail::RunArena arena(options.threads);

  SmcResult result;
  result.threads = arena.threads();
  arena.execute([&] {
    if (options.proposal == Algorithm::race) {
      const auto system = detail::make_discrete_race_system(data, options);
      detail::run_smc_loop(*system, data.n, options, start, result);
    } else {
      DiscreteProposalSystem system(data, options);
      detail::run_smc_loop(system, data.n, options, start, result);
    }
  });
  // The loop estimates p(x) / prod q_{d, x_id} (normalized messages): add the base term.
  const double base = data.log_base_term();
  result.log_evidence += base;
  for (SmcParticle& particle : result.particles) particle.log_weight += base;
  return result;
}

}  // namespace kingman
