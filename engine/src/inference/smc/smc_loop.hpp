#pragma once
// The SMC loop shared by every algorithm (MODEL.md section 5): extend all particles by one
// merge, reweight, accumulate the evidence, record the ESS, and resample when it drops. What a
// step does to a particle is the algorithm's business (ParticleSystem); the loop owns the
// weights, so evidence, ESS and resampling are computed the same way for all of them.
#include <chrono>
#include <cstddef>
#include <span>

#include "kingman/inference/smc.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman::detail {

class ParticleSystem {
 public:
  virtual ~ParticleSystem() = default;
  // Extends every particle by merge number `step` (0-based) and writes each particle's log
  // incremental weight. Values must not depend on the number of threads.
  virtual void extend(std::size_t step, std::span<double> log_alpha) = 0;
  // Particle s becomes a copy of the old particle ancestors[s].
  virtual void resample(std::span<const std::size_t> ancestors) = 0;
  // The merge list of a particle (complete once n - 1 steps are done).
  virtual MergeTree tree(std::size_t particle) const = 0;
};

// Runs the n - 1 steps on `system` (which holds options.particles particles of n leaves) and
// fills log_evidence, ess, resampled_at and particles of `result`. Call it inside the task
// arena the run uses.
void run_smc_loop(ParticleSystem& system, std::size_t leaf_count, const SmcOptions& options,
                  std::chrono::steady_clock::time_point start, SmcResult& result);

}  // namespace kingman::detail
