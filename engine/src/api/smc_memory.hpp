#pragma once
// What an SMC run's memory is counted as, before it starts (the check against --max-memory)
// and while it runs (the cap on the clusters its steps make, cluster_pool.hpp).
#include <cstddef>

#include "kingman/options.hpp"

namespace kingman::detail {

struct SmcMemory {
  // Reached whatever the resampling: pair caches, step tables, the particles' lists and
  // histories, the results.
  double fixed = 0.0;
  // The clusters the steps make, for particles that share them by resampling as the default
  // --ess-threshold does (each particle's own: n - 1 of them).
  double clusters = 0.0;
  double total() const { return fixed + clusters; }
  // What the clusters may hold at most within `budget`: the budget less the fixed part.
  std::size_t cluster_budget(std::size_t budget) const;
};

// SmcOptions::step_table_bytes for a run within `budget` bytes: 64 MiB where the budget is
// ample, a sixteenth of it where that is less (at least 1 MiB). The caps only trade speed for
// memory, so a small budget need not count three 64 MiB tables that a run seldom fills.
std::size_t step_table_bytes(std::size_t budget);

// The step tables of the law-proposal system (law_proposal_system.hpp, step_pair_laws.hpp) for
// PostPost, MPost1 and MPost2 on n points: the scores of the groups of several particles (at
// most half the particles) in batches within `table_bytes`, PostPost's needed pairs and shared
// laws within it too, and each thread's scores of a group of one particle.
double law_proposal_table_bytes(Algorithm algorithm, std::size_t n, std::size_t particles,
                                std::size_t threads, std::size_t table_bytes);

// The threads a run with `threads` requested (0: all cores) uses.
std::size_t run_threads(int threads);

// The memory budget of a run: --max-memory, or the default (three quarters of the machine's).
std::size_t run_memory_budget(const FitOptions& options);

}  // namespace kingman::detail
