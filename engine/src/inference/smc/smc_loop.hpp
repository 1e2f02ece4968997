#pragma once
// The SMC loop shared by every algorithm (MODEL.md section 5): extend all particles by one
// merge, reweight, accumulate the evidence, record the ESS, and resample when it drops. What a
// step does to a particle is the algorithm's business (ParticleSystem); the loop owns the
// weights, so evidence, ESS and resampling are computed the same way for all of them.
#include <chrono>
#include <cstddef>
#include <span>
#include <vector>

#include "../../scheduler/parallel_for.hpp"
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

// Replaces `particles` by their resampled generation, particle s taking the state of
// particle ancestors[s]. One offspring of each ancestor takes its state by a swap, so the
// (usually many) particles with a single offspring are not copied; the copies, which may be
// O(m) each, run in parallel (copy_work: the rough cost of one, as for parallel_for_work), as
// resampling otherwise runs on one thread while the others wait. Copies are assigned into
// `next`'s old elements and swaps hand those back, so buffers keep their capacity from one
// resampling to the next. Afterwards `next` holds stale states for the caller to clear or
// keep; values are the same as with plain copies, whatever the thread count.
template <typename Particle>
void resample_particles(std::vector<Particle>& particles, std::vector<Particle>& next,
                        std::span<const std::size_t> ancestors, std::size_t copy_work) {
  const std::size_t count = particles.size();
  // taker[a]: the offspring that takes ancestor a's state by a swap (its first).
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<std::size_t> taker(count, kNone);
  for (std::size_t s = 0; s < count; ++s)
    if (taker[ancestors[s]] == kNone) taker[ancestors[s]] = s;
  // Every other offspring copies (reading its ancestor, which nothing writes meanwhile)...
  parallel_for_work(0, count, copy_work, [&](const auto& range) {
    for (std::size_t s = range.begin(); s != range.end(); ++s)
      if (taker[ancestors[s]] != s) next[s] = particles[ancestors[s]];
  });
  // ...before the takers swap.
  for (std::size_t a = 0; a < count; ++a)
    if (taker[a] != kNone) std::swap(next[taker[a]], particles[a]);
  std::swap(particles, next);
}

// Runs the n - 1 steps on `system` (which holds options.particles particles of n leaves) and
// fills log_evidence, ess, resampled_at and particles of `result`. Call it inside the task
// arena the run uses.
void run_smc_loop(ParticleSystem& system, std::size_t leaf_count, const SmcOptions& options,
                  std::chrono::steady_clock::time_point start, SmcResult& result);

}  // namespace kingman::detail
