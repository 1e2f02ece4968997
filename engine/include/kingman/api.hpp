#pragma once
// The public C++ entry point: fit a table, get a result object.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kingman/data/table.hpp"
#include "kingman/options.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman {

struct Particle {
  double log_weight = 0.0;  // unnormalized final log weight
  double weight = 1.0;      // normalized weight
  MergeTree tree;           // complete merge list
};

struct FitResult {
  Algorithm algorithm = Algorithm::greedy_rate1;
  std::size_t n = 0;
  std::size_t d = 0;
  std::uint64_t seed = 0;
  int threads = 1;                          // threads actually used
  bool pin_threads = false;                 // FitOptions::pin_threads, as asked
  std::optional<double> log_evidence;       // SMC: log of the unbiased estimate; greedy: none
  double log_joint = 0.0;                   // log p(x, pi) of the best tree under the final model
  std::vector<Particle> particles;          // every final particle (greedy: one, weight 1)
  std::size_t best = 0;                     // index of the highest-weight particle
  std::vector<double> ess;                  // ESS after each SMC step
  std::vector<std::size_t> resampled_at;    // steps (1-based) after which resampling happened
  Likelihood likelihood{};                  // the model of the data given the tree
  std::vector<double> covariance_diagonal;  // brownian: Lambda's diagonal for the final tree
  std::optional<PairStorage> pair_storage;  // greedy-rate1 (and the Brownian rescanning greedy
                                            // variants): how the pair scores were kept
  double leaf_variance = 0.0;               // brownian: v0 as used
  std::size_t categories = 0;               // binary/multinomial: alphabet size K
  std::vector<double> equilibrium;          // binary/multinomial: q as used, row-major d x K
  std::vector<double> mutation_rates;       // binary/multinomial: lambda_d as used
  double seconds = 0.0;                     // wall time of the fit

  const MergeTree& best_tree() const { return particles.at(best).tree; }
};

// Runs the chosen algorithm. Throws InputError/OptionError/ResourceError with a clear message.
FitResult fit(const Table& data, const FitOptions& options);

// The bytes an SMC fit (options.algorithm an SMC algorithm) of `data` is checked against the
// memory budget for before it starts: its pair caches, step tables and particles, with the
// clusters of particles that resample as the default --ess-threshold does. While it runs the
// clusters are held to the budget less the rest; a run whose particles share fewer clusters
// (a lower --ess-threshold) may then stop with ResourceError instead of passing it.
std::size_t smc_memory_bytes(const Table& data, const FitOptions& options);

}  // namespace kingman
