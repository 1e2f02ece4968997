#include "smc_loop.hpp"

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "../../scheduler/parallel_for.hpp"
#include "kingman/error.hpp"
#include "kingman/kernels/resampling.hpp"
#include "kingman/kernels/rng.hpp"
#include "kingman/kernels/weights.hpp"

namespace kingman::detail {

namespace {

// Stream coordinates: particles use b = step + 1, resampling uses b = 0 with a = step.
constexpr std::uint64_t kResamplingDomain = 0;

// Rough arithmetic cost of copying one merge into a particle's tree (a cache miss).
constexpr std::size_t kTreeWorkPerMerge = 50;

}  // namespace

void run_smc_loop(ParticleSystem& system, std::size_t leaf_count, const SmcOptions& options,
                  std::chrono::steady_clock::time_point start, SmcResult& result) {
  const std::size_t n = leaf_count, count = options.particles;
  std::vector<double> log_weights(count, -std::log(static_cast<double>(count)));
  std::vector<double> log_alpha(count), weights(count);

  double log_evidence = 0.0;
  auto last_report = start;
  for (std::size_t step = 0; step + 1 < n; ++step) {
    system.extend(step, log_alpha);
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
      system.resample(ancestors);
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
  result.log_evidence = n == 1 ? 0.0 : log_evidence;
  result.particles.resize(count);
  for (std::size_t s = 0; s < count; ++s) {
    result.particles[s].weight = std::exp(log_weights[s]);
    result.particles[s].log_weight = log_weights[s] + result.log_evidence;
  }
  // Each tree walks its particle's merges (a scattered read each): on the run's threads, not
  // on one while the others wait, where the steps have started them.
  parallel_for_work(
      0, count, kTreeWorkPerMerge * n,
      [&](const auto& range) {
        for (std::size_t s = range.begin(); s != range.end(); ++s)
          result.particles[s].tree = system.tree(s);
      },
      kTasksPerThread, LoopPlace::alone);
}

}  // namespace kingman::detail
