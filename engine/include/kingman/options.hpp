#pragma once
// Plain option structs with in-class defaults; the CLI fills the same structs.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kingman/kernels/resampling.hpp"

namespace kingman {

enum class Algorithm {
  greedy_rate1,        // Teh's Greedy-Rate1: O(n^2), each pair scored once at creation
  greedy_minduration,  // smallest optimal duration delta* (MODEL.md section 4)
  greedy_maxprob,      // largest exp(-lambda delta) Z at the feasible duration
  mgreedy,             // Henao's MGreedy: smallest duration at the log-scale posterior mode
  priorprior,          // SMC proposals (MODEL.md section 5)
  priorpost,
  postpost,
  mpost1,
  mpost2,
  race,  // Goerur-Teh regenerative race (MODEL.md section 6)
};

bool is_greedy(Algorithm algorithm);
std::string to_string(Algorithm algorithm);
// Throws OptionError naming the accepted spellings.
Algorithm parse_algorithm(const std::string& name);

// How MPost2 sums each live cluster's pair weights when it draws a pair (a speed trade-off
// only: the proposals agree to ~2^-30 and the weights are exact either way). `dense` passes
// over every stored weight per step; `leaf_sums` carries the leaves' part from step to step,
// which pays from a few hundred points on; `automatic` chooses by the number of points.
enum class Mpost2RowSums { automatic, dense, leaf_sums };

// `automatic` takes leaf sums from this many points on (the measurements behind it are in
// engine/src/inference/smc/pair_cache.hpp).
inline constexpr std::size_t kMpost2LeafSumsFromPoints = 320;

inline bool mpost2_uses_leaf_sums(Mpost2RowSums row_sums, std::size_t points) {
  return row_sums == Mpost2RowSums::leaf_sums ||
         (row_sums == Mpost2RowSums::automatic && points >= kMpost2LeafSumsFromPoints);
}

// How Brownian Greedy-Rate1 keeps its pair scores; the tree is the same either way. `full`: all
// n(n-1)/2 of them, each scored once (the rescanning greedy algorithms always do); `bounded`:
// each cluster's best partners, rescanned when they have all merged, in O(n d + n k) memory;
// `automatic`: bounded where it is the faster path (greedy_rate1_prefers_bounded, greedy.hpp)
// or where the full store does not fit the memory budget, full otherwise.
enum class PairStorage { automatic, full, bounded };

std::string to_string(PairStorage storage);  // "auto", "full", "bounded"
PairStorage parse_pair_storage(const std::string& name);

enum class CovarianceKind {
  learned,    // default: diagonal Lambda learned by alternating tree and MAP (shrunk scales)
  identity,   // Lambda = I, data used exactly as given
  isotropic,  // Lambda = sigma^2 I, sigma^2 learned
  diagonal,   // Lambda diagonal, each column's scale learned independently
  full,       // full Lambda learned (inverse-Wishart MAP); no missing entries
};

std::string to_string(CovarianceKind kind);
CovarianceKind parse_covariance(const std::string& name);

std::string to_string(kernels::ResamplingScheme scheme);
kernels::ResamplingScheme parse_resampling(const std::string& name);

struct BrownianOptions {
  CovarianceKind covariance = CovarianceKind::learned;  // how Lambda is chosen
  std::optional<double> leaf_variance;  // v0; unset: 0, or a small documented value if rows repeat
  int learning_rounds = 3;              // tree/Lambda alternations when Lambda is learned
  double shrinkage = 2.0;  // learned: prior weight of the shared scale, in (n-1)/2 observations
};

// The likelihood of the data given a tree with merge times.
enum class Likelihood {
  brownian,     // continuous data, Brownian diffusion (MODEL.md section 3)
  binary,       // values 0/1, independent-sites mutation process (MODEL.md section 7, K = 2)
  multinomial,  // values 0..K-1, independent-sites mutation process (MODEL.md section 7)
};

std::string to_string(Likelihood likelihood);
Likelihood parse_likelihood(const std::string& name);

enum class EquilibriumKind {
  data,     // per-column frequencies over observed entries, add-one (Laplace) smoothed
  uniform,  // q_dk = 1/K in every column
  given,    // the same probabilities in every column (Equilibrium::probabilities)
};

struct Equilibrium {
  EquilibriumKind kind = EquilibriumKind::data;  // how each column's q_d is chosen
  std::vector<double> probabilities;  // given: K summing to 1, or (binary) one Q = P(value 1)
};

// "data", "uniform", one number (binary: the probability of value 1) or a comma-separated list
// of K probabilities. Ranges are checked when the alphabet is known; throws OptionError.
Equilibrium parse_equilibrium(const std::string& text);

// A comma-separated list of numbers ("0.5" or "1,2,0.5"); throws OptionError naming option.
std::vector<double> parse_number_list(const std::string& text, const std::string& option);

struct DiscreteOptions {
  Equilibrium equilibrium;             // equilibrium distribution q_d of every column
  std::vector<double> mutation_rates;  // lambda_d: empty = 1; one value = all; else one per column
  std::optional<std::size_t> categories;  // multinomial alphabet size K; unset: largest value + 1
};

struct FitOptions {
  Algorithm algorithm = Algorithm::greedy_rate1;  // inference algorithm
  Likelihood likelihood = Likelihood::brownian;   // model of the data given the tree
  BrownianOptions brownian;                       // Brownian diffusion likelihood settings
  DiscreteOptions discrete;                       // binary / multinomial likelihood settings
  std::uint64_t seed = 1;                         // seed of every random stream
  int threads = 0;                                // worker threads; 0 = all cores
  // Each thread of the run on a CPU of its own while it works in the run (never changes a
  // result): for timing on a machine the run has to itself (engine/src/scheduler/
  // thread_pinning.hpp says why it is not the default).
  bool pin_threads = false;
  std::size_t particles = 100;  // SMC particle count
  kernels::ResamplingScheme resampling = kernels::ResamplingScheme::systematic;  // SMC scheme
  double ess_threshold = 0.5;  // SMC: resample when ESS / particles falls below this
  Mpost2RowSums mpost2_row_sums = Mpost2RowSums::automatic;  // MPost2's row sums (see above)
  std::size_t max_memory = 0;  // bytes for large allocations; 0 = 3/4 of physical memory
  PairStorage pair_storage = PairStorage::automatic;  // Brownian Greedy-Rate1's pair scores
  bool verbose = false;                               // progress lines on stderr
};

}  // namespace kingman
