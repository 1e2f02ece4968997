// run_smc: checks the settings and runs the shared SMC loop (smc_loop.hpp) on the particle
// system of the chosen algorithm: the per-step proposals of MODEL.md section 5 (below) or the
// regenerative race of section 6 (race.cpp). Each particle's randomness comes from streams keyed
// by coordinates that ignore the thread count, so the thread count never changes a value.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "../../scheduler/parallel_for.hpp"
#include "../../scheduler/run_arena.hpp"
#include "cluster_pool.hpp"
#include "history_pool.hpp"
#include "kingman/error.hpp"
#include "kingman/inference/smc.hpp"
#include "kingman/model/coalescent_prior.hpp"
#include "missing_smc.hpp"
#include "pair_cache.hpp"
#include "particle_state.hpp"
#include "prior_prior.hpp"
#include "proposals.hpp"
#include "race.hpp"
#include "smc_loop.hpp"
#include "state_groups.hpp"

namespace kingman {

namespace {

using detail::ParticleState;

// Particles of one group handled by one task (sharing its cache of chosen pairs).
constexpr std::size_t kChunk = 16;

// Rough arithmetic cost of one step's two phases (parallel_for.hpp uses them to decide how
// finely to split): building one state's candidates, and drawing and merging for one particle.
struct StepWork {
  std::size_t per_group = 1, per_particle = 1;
};

StepWork step_work(Algorithm proposal, std::size_t m, std::size_t d) {
  const std::size_t pairs = m * (m - 1) / 2;
  // A complete or incomplete GIG integral, or a truncated-GIG sampler: a few hundred
  // transcendental functions.
  constexpr std::size_t kGigWork = 4000;
  switch (proposal) {
    case Algorithm::priorprior:  // one uniform pair, its likelihood and the merged mean
      return {1, 4 * (m + d)};
    case Algorithm::priorpost:  // every pair's likelihood at the drawn duration
      return {2 * pairs, 40 * pairs + 4 * m * d};
    case Algorithm::postpost:  // every pair's exact mass
    case Algorithm::mpost1:
      return {kGigWork * pairs, kGigWork + 4 * m * d};
    default:  // MPost2: factored scores; the chosen pair's mass and the merged cluster's row
      return {4 * pairs + 40 * m, kGigWork + 4 * m * d};
  }
}

detail::LeafPairs leaf_pairs_for(Algorithm proposal) {
  switch (proposal) {
    case Algorithm::priorprior:
      return detail::LeafPairs::on_demand;
    case Algorithm::mpost2:
      return detail::LeafPairs::mpost2_weights;
    default:
      return detail::LeafPairs::distances;
  }
}

bool is_smc_algorithm(Algorithm a) {
  return a == Algorithm::priorprior || a == Algorithm::priorpost || a == Algorithm::postpost ||
         a == Algorithm::mpost1 || a == Algorithm::mpost2 || a == Algorithm::race;
}

void check(const WhitenedData& data, double leaf_variance, const SmcOptions& options) {
  if (!is_smc_algorithm(options.proposal))
    throw OptionError(to_string(options.proposal) + " is not an SMC proposal");
  if (options.particles < 1) throw OptionError("--particles must be at least 1");
  if (!(options.ess_threshold >= 0.0 && options.ess_threshold <= 1.0))
    throw OptionError("--ess-threshold must be in [0, 1]");
  if (data.x.size() != data.n * data.d)
    throw InputError("SMC: the data hold the wrong count of values");
  if (!data.has_missing &&
      std::any_of(data.x.begin(), data.x.end(), [](double v) { return std::isnan(v); }))
    throw InputError("SMC: the data hold NaN entries but are not marked as having missing entries");
  if (data.has_missing && data.log_lambda_diagonal.size() != data.d)
    throw InputError("SMC: data with missing entries need log Lambda_jj for every dimension");
  if (data.has_missing && !detail::handles_missing_entries(options.proposal))
    throw OptionError(to_string(options.proposal) + " does not handle missing entries");
  if (!(leaf_variance >= 0.0)) throw OptionError("leaf variance must be >= 0");
  if (data.n < 2) throw InputError("SMC needs at least two points");
}

// The proposals of MODEL.md section 5: every step draws a pair and a duration afresh from the
// particle's current state (proposals.hpp). PriorPrior runs in a system of its own
// (prior_prior.cpp) that makes the same draws with cheaper live lists.
class ProposalSystem final : public detail::ParticleSystem {
 public:
  ProposalSystem(const WhitenedData& data, double leaf_variance, const SmcOptions& options)
      : seed_(options.seed),
        share_row_sums_(options.proposal == Algorithm::mpost2 && options.mpost2_share_row_sums),
        share_pair_kernels_(
            (options.proposal == Algorithm::postpost || options.proposal == Algorithm::mpost1) &&
            options.share_pair_kernels),
        pair_tails_(options.step_table_bytes),
        cache_(data, leaf_pairs_for(options.proposal), options.mpost2_row_sums),
        context_{options.proposal, data.n, data.d, data.log_det_lambda, &cache_},
        particles_(options.particles),
        sources_(options.particles) {
    context_.skip_negligible_pairs = options.skip_negligible_pairs;
    // A merged cluster: its node, mean and a row over the smaller node ids (distances, or
    // MPost2's pair weights), with the allocator's overhead per buffer.
    pool_.limit(sizeof(detail::Mpost2ClusterNode) + sizeof(double) * (data.d + 2 * data.n) + 64,
                options.max_cluster_bytes);
    // Leaves are shared by every particle, in one block of the pool.
    std::vector<const detail::ClusterNode*> leaves;
    leaves.reserve(data.n);
    for (const detail::ClusterNode& leaf :
         pool_.keep_block(data.n, [&](std::span<detail::ClusterNode> nodes) {
           detail::fill_leaves(data, leaf_variance, nodes);
         }))
      leaves.push_back(&leaf);
    for (ParticleState& p : particles_) p.live = leaves;
  }

  // One state per group (its leader's), for the structures that a step's states share.
  void collect_leaders() {
    leaders_.resize(groups_.size());
    for (std::size_t g = 0; g < groups_.size(); ++g) leaders_[g] = &state_of(groups_.leader(g));
  }

  void extend(std::size_t step, std::span<double> log_alpha) override {
    const std::size_t count = particles_.size(), n = context_.leaf_count;
    // Resampled copies of one state share its pair candidates: group particles by state
    // (their history pointer), in particle order, and build each group's candidates once.
    history_keys_.resize(count);
    for (std::size_t s = 0; s < count; ++s) history_keys_[s] = state_of(s).history;
    groups_.assign(std::span<const detail::HistoryNode* const>(history_keys_));
    const std::vector<std::size_t>& members = groups_.members();
    // Copies of a state list the same clusters: a sweep marks one list per group. (MPost2
    // resamples at most steps, often down to a few dozen distinct states.)
    pool_.collect_if_due(
        count, groups_.size(), [&](std::size_t g) -> const auto& {
          return state_of(groups_.leader(g)).live;
        });
    // MPost2 with leaf sums: the row sums' part that the states share (shared_row_sums.hpp).
    context_.shared_row_sums = nullptr;
    if (share_row_sums_ && cache_.uses_leaf_sums()) {
      collect_leaders();
      const double lambda = coalescent_rate(n - step);
      if (shared_row_sums_.prepare(leaders_, cache_, n, lambda, step + 1)) {
        shared_row_sums_.compute_common_parts(leaders_.front()->live);
        context_.shared_row_sums = &shared_row_sums_;
      }
    }
    // PostPost and MPost1: the pair kernels that the states share (step_pair_tails.hpp).
    context_.pair_tails = nullptr;
    if (share_pair_kernels_) {
      collect_leaders();
      const double shape = 1.0 - 0.5 * static_cast<double>(context_.dims);
      if (pair_tails_.prepare(leaders_, shape, coalescent_rate(n - step), cache_,
                              context_.proposal == Algorithm::mpost1))
        context_.pair_tails = &pair_tails_;
    }
    // Each particle's new cluster goes into a node freed by an earlier sweep where one is left.
    created_.resize(count);
    for (auto& node : created_) node = pool_.take_spare();
    history_.start_step(count, [&](std::size_t s) { return state_of(s).history; });
    // MPost2's leaf sums of this step's states, by group, where the last step's (which the
    // states point to) stay untouched. Never shrunk: the buffers are reused step after step.
    std::vector<detail::LeafRowSums>& step_leaf_sums = leaf_sums_[step % 2];
    if (cache_.uses_leaf_sums() && step_leaf_sums.size() < groups_.size())
      step_leaf_sums.resize(groups_.size());
    const std::size_t m = n - step;
    StepWork work = step_work(context_.proposal, m, context_.dims);
    if (pending_) work.per_particle += m;  // its resampled copy
    // One parallel loop per step: each group's task builds its candidates, then draws for its
    // members in chunks of kChunk particles, each chunk with its own cache of chosen pairs (a
    // pure function of state and pair, so caching never changes a value); a large group's
    // chunks become tasks of their own. (A separate loop for the draws would add a fork and a
    // join per step, where an idle worker waits.)
    const std::size_t mean_members = count / std::max<std::size_t>(1, groups_.size());
    // Every particle's stream this step has the same key (rng.hpp): derived once.
    const kernels::RandomStream::Key step_key = kernels::RandomStream::key(seed_, step + 1);
    auto draw_chunk = [&](const detail::PairCandidates& candidates, std::size_t first,
                          std::size_t last) {
      // Reused by the thread's chunks (cleared, capacity kept): no allocation per chunk.
      thread_local detail::ChosenPairCache chosen_pairs;
      chosen_pairs.clear();
      for (std::size_t k = first; k < last; ++k) {
        const std::size_t s = members[k];
        kernels::RandomStream stream(seed_, s, step + 1, step_key);
        // A pending copy takes its ancestor's state with its merge (into its own buffers).
        log_alpha[s] =
            detail::draw_and_merge(state_of(s), particles_[s], candidates, step, context_, stream,
                                   chosen_pairs, created_[s], history_.node(s));
      }
    };
    candidate_stacks_.resize(std::max(candidate_stacks_.size(), detail::loop_thread_count()));
    detail::parallel_for_work(
        0, groups_.size(), work.per_group + mean_members * work.per_particle,
        [&](const auto& range) {
          const std::size_t slot = detail::current_thread_slot();
          if (slot >= candidate_stacks_.size())
            throw std::logic_error("ProposalSystem: a thread slot beyond the arena's threads");
          CandidateStack::Use use(candidate_stacks_[slot]);
          for (std::size_t g = range.begin(); g != range.end(); ++g) {
            use.candidates.leaf_sums = cache_.uses_leaf_sums() ? &step_leaf_sums[g] : nullptr;
            detail::build_candidates(state_of(groups_.leader(g)), context_, use.candidates);
            const std::size_t begin = groups_.member_begin(g), end = groups_.member_begin(g + 1);
            const std::size_t chunks = (end - begin + kChunk - 1) / kChunk;
            detail::parallel_for_work(
                0, chunks, kChunk * work.per_particle, [&](const auto& chunk_range) {
                  for (std::size_t c = chunk_range.begin(); c != chunk_range.end(); ++c) {
                    const std::size_t first = begin + c * kChunk;
                    draw_chunk(use.candidates, first, std::min(first + kChunk, end));
                  }
                });
          }
        });
    for (auto& cluster : created_) pool_.adopt(std::move(cluster));
    pending_ = false;
  }

  // The copies are left to the next step's parallel loop, where each particle takes its
  // ancestor's state just before it draws: a separate parallel loop for them here cost a fork
  // and a join per resampling, where the idle thread spins (MPost2 resamples at most steps), and
  // copying them here on one thread would leave the other idle. The generation resampled from
  // stays in sources_, untouched, until then.
  void resample(std::span<const std::size_t> ancestors) override {
    if (pending_) throw std::logic_error("ProposalSystem: resampled twice without a step");
    std::swap(particles_, sources_);  // particles_ now holds buffers to copy into
    ancestors_.assign(ancestors.begin(), ancestors.end());
    pending_ = true;
  }

  MergeTree tree(std::size_t particle) const override {
    return detail::to_merge_tree(state_of(particle), context_.leaf_count);
  }

 private:
  // Particle s's state: its own, or while its resampled copy is pending, its ancestor's.
  const ParticleState& state_of(std::size_t s) const {
    return pending_ ? sources_[ancestors_[s]] : particles_[s];
  }

  std::uint64_t seed_;
  bool share_row_sums_;
  bool share_pair_kernels_;
  detail::StepPairTails pair_tails_;
  detail::LeafPairCache cache_;
  detail::StepContext context_;
  std::vector<ParticleState> particles_;
  // The last resampling: the generation it drew from and each particle's ancestor there, and
  // whether the copies are still pending (resample).
  std::vector<ParticleState> sources_;
  std::vector<std::size_t> ancestors_;
  bool pending_ = false;
  // Pair candidates, built and read by the tasks of one thread slot (parallel_for.hpp): a
  // thread's tasks reuse its own buffers step after step, still in its caches, where a buffer
  // per group number went through a different buffer for every group (MPost2 at n = 400 on one
  // thread 2.5 % slower) and held O(m^2) pairs per group for PostPost and MPost1 (PostPost at
  // n = 400 with 64 particles peaked at 106 MiB, now 30 MiB). A stack per slot, since a thread
  // that waits for its group's chunks may run another group's task meanwhile: memory is one
  // buffer per thread and level of such nesting. (bench/RESULTS.md, eighteenth session.)
  struct alignas(64) CandidateStack {
    std::vector<std::unique_ptr<detail::PairCandidates>> buffers;
    std::size_t depth = 0;
    // The next free buffer of `stack` while it lives.
    struct Use {
      explicit Use(CandidateStack& s)
          : stack(s),
            candidates(s.depth < s.buffers.size()
                           ? *s.buffers[s.depth]
                           : *s.buffers.emplace_back(std::make_unique<detail::PairCandidates>())) {
        ++stack.depth;
      }
      ~Use() { --stack.depth; }
      Use(const Use&) = delete;
      Use& operator=(const Use&) = delete;
      CandidateStack& stack;
      detail::PairCandidates& candidates;
    };
  };
  std::vector<CandidateStack> candidate_stacks_;
  detail::ClusterPool<detail::ClusterNode> pool_{/*reuse=*/true};  // every particle's clusters
  std::vector<std::unique_ptr<detail::ClusterNode>> created_;      // by particle, in extend
  detail::HistoryPool history_;                                    // every particle's merges
  // MPost2's leaf sums (ParticleState::leaf_sums) of the states of the last two steps, by group.
  std::vector<detail::LeafRowSums> leaf_sums_[2];
  std::vector<const detail::HistoryNode*> history_keys_;  // by particle, in extend
  detail::StateGroups groups_;                            // of particles, in extend
  detail::SharedRowSums shared_row_sums_;                 // MPost2's, in extend
  std::vector<const ParticleState*> leaders_;             // a state per group, in extend
};

}  // namespace

SmcResult run_smc(const WhitenedData& data, double leaf_variance, const SmcOptions& options) {
  check(data, leaf_variance, options);
  const auto start = std::chrono::steady_clock::now();
  detail::RunArena arena(options.threads, options.pin_threads);

  SmcResult result;
  result.threads = arena.threads();
  try {
    arena.execute([&] {
      std::unique_ptr<detail::ParticleSystem> system;
      if (data.has_missing) {
        system = detail::make_missing_data_system(data, leaf_variance, options);
      } else if (options.proposal == Algorithm::race) {
        system = detail::make_race_system(data, leaf_variance, options);
      } else if (options.proposal == Algorithm::priorprior) {
        system = detail::make_prior_prior_system(data, leaf_variance, options);
      } else {
        system = std::make_unique<ProposalSystem>(data, leaf_variance, options);
      }
      detail::run_smc_loop(*system, data.n, options, start, result);
    });
  } catch (const Error&) {
    throw;
  } catch (const std::exception& error) {
    // A kernel (GIG integral, sampler or quantile, Bessel function) refused its arguments or did
    // not converge: past check_smc_scale (fit.cpp) that should not happen, and the message says
    // which kernel and arguments.
    throw NumericalError(to_string(options.proposal) + ": " + error.what());
  }
  return result;
}

}  // namespace kingman
