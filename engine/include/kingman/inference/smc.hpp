#pragma once
// Sequential Monte Carlo over merge histories for the Brownian model (MODEL.md section 5):
// particles, the proposals of Teh et al. and Henao & Lucas with exact incremental weights,
// ESS-triggered resampling, and the unbiased evidence estimate.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kingman/kernels/resampling.hpp"
#include "kingman/model/whitened_data.hpp"
#include "kingman/options.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman {

struct SmcOptions {
  Algorithm proposal = Algorithm::mpost2;  // priorprior | priorpost | postpost | mpost1 | mpost2
  std::size_t particles = 100;             // N
  std::uint64_t seed = 1;                  // streams are keyed by (seed, particle, step)
  int threads = 0;                         // 0 = all cores; never changes the result
  bool pin_threads = false;                // FitOptions::pin_threads
  kernels::ResamplingScheme resampling = kernels::ResamplingScheme::systematic;
  double ess_threshold = 0.5;  // resample after a step when ESS / N < threshold
  Mpost2RowSums mpost2_row_sums = Mpost2RowSums::automatic;  // MPost2 only (options.hpp)
  // MPost2 with leaf sums: sum the merged partners' weights once per step for the clusters that
  // several states list (engine/src/inference/smc/shared_row_sums.hpp). A speed trade-off only:
  // the proposal changes by rounding, and the weights are exact either way.
  bool mpost2_share_row_sums = true;
  // PostPost and MPost1: compute each pair's GIG kernel once per step for the pairs that several
  // states list (engine/src/inference/smc/step_pair_tails.hpp). Speed only: the scores are the
  // same bits either way.
  bool share_pair_kernels = true;
  // PostPost where pair masses come from duration laws (data with missing entries, binary data
  // with per-column rates): one law per step for each pair that several states list
  // (engine/src/inference/smc/step_pair_laws.hpp). Speed only: masses agree to ~1e-13.
  bool share_pair_laws = true;
  // PostPost on Brownian data: pairs whose masses cannot matter, by a cheap upper bound on each
  // (below e^-46 of the state's total in all), are left out, as if their masses were 0. Speed
  // only: the total changes far below its rounding, and such a pair would be drawn with
  // probability below 1e-20.
  bool skip_negligible_pairs = true;
  // Bytes the clusters the steps make may hold (fit passes --max-memory less what it counts for
  // the rest); 0 leaves them unchecked. Checked as they grow, where a cluster carries a row per
  // partner (PriorPost, PostPost, MPost1, MPost2; on data with missing entries MPost2): without
  // resampling the particles share none of them. A run that would pass it throws ResourceError.
  std::size_t max_cluster_bytes = 0;
  // Bytes each of a step's shared tables may take: PostPost's and MPost1's pair kernels
  // (step_pair_tails.hpp), the law-proposal system's batched pair masses and needed pairs, and
  // PostPost's shared laws (step_pair_laws.hpp). Beyond it a step shares less or scores its
  // states in smaller batches: speed only, the values are the same. fit scales it down with
  // --max-memory (smc_memory.hpp).
  std::size_t step_table_bytes = std::size_t{64} << 20;
  bool verbose = false;  // progress lines on stderr
};

struct SmcParticle {
  double log_weight = 0.0;  // log(W) + log(evidence): the exp's sum to the evidence estimate
  double weight = 0.0;      // normalized W
  MergeTree tree;
};

struct SmcResult {
  double log_evidence = 0.0;              // log of the unbiased estimate of p(x)
  std::vector<SmcParticle> particles;     // every final particle
  std::vector<double> ess;                // ESS after each step's reweighting
  std::vector<std::size_t> resampled_at;  // 1-based steps after which particles were resampled
  int threads = 1;                        // threads used
};

// Throws OptionError for a non-SMC algorithm, data with missing entries, or bad settings.
SmcResult run_smc(const WhitenedData& data, double leaf_variance, const SmcOptions& options);

}  // namespace kingman
