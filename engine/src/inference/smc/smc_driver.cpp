// The SMC loop: extend every particle by one merge (in parallel: each particle's randomness
// comes from its own stream keyed by (seed, particle, step), so the thread count never changes
// a value), reweight, accumulate the evidence, and resample when the ESS drops.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <unordered_map>

#include "kingman/error.hpp"
#include "kingman/inference/smc.hpp"
#include "kingman/kernels/weights.hpp"
#include "pair_cache.hpp"
#include "particle_state.hpp"
#include "proposals.hpp"

namespace kingman {

namespace {

using detail::ParticleState;

// Stream coordinates: particles use b = step + 1, resampling uses b = 0 with a = step.
constexpr std::uint64_t kResamplingDomain = 0;
// Memory for the pair candidates of the particle groups processed at once.
constexpr std::size_t kCandidateBudgetBytes = std::size_t{256} << 20;
// Particles of one group handled by one task (sharing its cache of chosen pairs).
constexpr std::size_t kChunk = 16;

bool is_smc_proposal(Algorithm a) {
  return a == Algorithm::priorprior || a == Algorithm::priorpost || a == Algorithm::postpost ||
         a == Algorithm::mpost1 || a == Algorithm::mpost2;
}

void check(const WhitenedData& data, double leaf_variance, const SmcOptions& options) {
  if (!is_smc_proposal(options.proposal))
    throw OptionError(to_string(options.proposal) + " is not an SMC proposal");
  if (options.particles < 1) throw OptionError("--particles must be at least 1");
  if (!(options.ess_threshold >= 0.0 && options.ess_threshold <= 1.0))
    throw OptionError("--ess-threshold must be in [0, 1]");
  if (data.has_missing)
    throw OptionError("SMC with missing entries is not supported yet; use a greedy algorithm");
  if (!(leaf_variance >= 0.0)) throw OptionError("leaf variance must be >= 0");
  if (data.n < 2) throw InputError("SMC needs at least two points");
}

}  // namespace

SmcResult run_smc(const WhitenedData& data, double leaf_variance, const SmcOptions& options) {
  check(data, leaf_variance, options);
  const auto start = std::chrono::steady_clock::now();
  const int threads =
      options.threads > 0 ? options.threads : tbb::this_task_arena::max_concurrency();
  tbb::task_arena arena(threads);
  const std::size_t n = data.n, count = options.particles;

  SmcResult result;
  result.threads = threads;
  std::vector<ParticleState> particles(count), next(count);
  std::vector<double> log_weights(count, -std::log(static_cast<double>(count)));
  std::vector<double> log_alpha(count), weights(count);

  arena.execute([&] {
    const detail::LeafPairCache cache(data, options.proposal == Algorithm::mpost2);
    const detail::StepContext context{options.proposal, n, data.d, data.log_det_lambda, &cache};

    // Leaves are shared by every particle.
    std::vector<std::shared_ptr<const detail::ClusterNode>> leaves(n);
    for (std::size_t i = 0; i < n; ++i) {
      auto leaf = std::make_shared<detail::ClusterNode>();
      leaf->id = i;
      leaf->variance = leaf_variance;
      leaf->mean.assign(data.row(i), data.row(i) + data.d);
      leaves[i] = std::move(leaf);
    }
    for (ParticleState& p : particles) p.live = leaves;
    std::vector<detail::PairCandidates> candidates;

    double log_evidence = 0.0;
    auto last_report = start;
    for (std::size_t step = 0; step + 1 < n; ++step) {
      // Resampled copies of one state share its pair candidates: group particles by state
      // (their history pointer), in particle order, and build each group's candidates once.
      std::vector<std::size_t> group_of(count), group_leader;
      std::unordered_map<const detail::HistoryNode*, std::size_t> group_by_history;
      for (std::size_t s = 0; s < count; ++s) {
        const auto [it, added] =
            group_by_history.emplace(particles[s].history.get(), group_leader.size());
        if (added) group_leader.push_back(s);
        group_of[s] = it->second;
      }
      // Particles listed group by group (each group in particle order).
      std::vector<std::size_t> member_begin(group_leader.size() + 1, 0), members(count);
      for (std::size_t s = 0; s < count; ++s) ++member_begin[group_of[s] + 1];
      for (std::size_t g = 0; g < group_leader.size(); ++g) member_begin[g + 1] += member_begin[g];
      {
        std::vector<std::size_t> fill(member_begin.begin(), member_begin.end() - 1);
        for (std::size_t s = 0; s < count; ++s) members[fill[group_of[s]]++] = s;
      }
      // Candidates take O(m^2) memory per group: work through the groups in batches.
      const std::size_t m = n - step;
      const std::size_t group_bytes = m * (m - 1) / 2 * 2 * sizeof(double) + 1;
      const std::size_t batch = std::max<std::size_t>(1, kCandidateBudgetBytes / group_bytes);
      for (std::size_t g0 = 0; g0 < group_leader.size(); g0 += batch) {
        const std::size_t g1 = std::min(group_leader.size(), g0 + batch);
        candidates.resize(std::max(candidates.size(), g1 - g0));
        tbb::parallel_for(tbb::blocked_range<std::size_t>(g0, g1), [&](const auto& range) {
          for (std::size_t g = range.begin(); g != range.end(); ++g)
            detail::build_candidates(particles[group_leader[g]], context, candidates[g - g0]);
        });
        // Tasks of up to kChunk particles of one group, each with its own cache of chosen
        // pairs (a pure function of state and pair, so caching never changes a value).
        std::vector<std::pair<std::size_t, std::size_t>> tasks;  // [begin, end) in `members`
        for (std::size_t g = g0; g < g1; ++g)
          for (std::size_t b = member_begin[g]; b < member_begin[g + 1]; b += kChunk)
            tasks.emplace_back(b, std::min(b + kChunk, member_begin[g + 1]));
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tasks.size()), [&](const auto& range) {
          detail::ChosenPairCache chosen_pairs;
          for (std::size_t task = range.begin(); task != range.end(); ++task) {
            chosen_pairs.clear();
            for (std::size_t k = tasks[task].first; k < tasks[task].second; ++k) {
              const std::size_t s = members[k];
              kernels::RandomStream stream(options.seed, s, step + 1);
              log_alpha[s] = detail::draw_and_merge(particles[s], candidates[group_of[s] - g0],
                                                    step, context, stream, chosen_pairs);
            }
          }
        });
      }
      // Reductions in particle order: the same sums whatever the thread count.
      for (std::size_t s = 0; s < count; ++s) log_weights[s] += log_alpha[s];
      const double increment = kernels::normalize_log_weights(log_weights, weights);
      if (!std::isfinite(increment)) {
        throw NumericalError("SMC step " + std::to_string(step + 1) +
                             ": every particle has zero weight");
      }
      log_evidence += increment;
      for (std::size_t s = 0; s < count; ++s) log_weights[s] = std::log(weights[s]);
      const double ess = kernels::effective_sample_size(weights);
      result.ess.push_back(ess);

      const bool last = step + 2 == n;
      if (!last && ess < options.ess_threshold * static_cast<double>(count)) {
        kernels::RandomStream stream(options.seed, step, kResamplingDomain);
        const std::vector<std::size_t> ancestors =
            kernels::resample(options.resampling, weights, count, stream);
        for (std::size_t s = 0; s < count; ++s) next[s] = particles[ancestors[s]];
        std::swap(particles, next);
        std::fill(log_weights.begin(), log_weights.end(), -std::log(static_cast<double>(count)));
        result.resampled_at.push_back(step + 1);
      }
      if (options.verbose) {
        const auto now = std::chrono::steady_clock::now();
        if (last || now - last_report > std::chrono::seconds(1)) {
          last_report = now;
          std::cerr << "kingman: step " << step + 1 << "/" << n - 1 << ", ESS " << ess << ", "
                    << std::chrono::duration<double>(now - start).count() << " s\n";
        }
      }
    }
    result.log_evidence = log_evidence;
  });

  if (n == 1) result.log_evidence = 0.0;
  result.particles.resize(count);
  for (std::size_t s = 0; s < count; ++s) {
    result.particles[s].weight = std::exp(log_weights[s]);
    result.particles[s].log_weight = log_weights[s] + result.log_evidence;
    result.particles[s].tree = detail::to_merge_tree(particles[s], n);
  }
  return result;
}

}  // namespace kingman
