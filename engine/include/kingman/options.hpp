#pragma once
// Plain option structs with in-class defaults; the CLI fills the same structs.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

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

struct FitOptions {
  Algorithm algorithm = Algorithm::greedy_rate1;  // inference algorithm
  BrownianOptions brownian;                       // Brownian diffusion likelihood settings
  std::uint64_t seed = 1;                         // seed of every random stream
  int threads = 0;                                // worker threads; 0 = all cores
  std::size_t particles = 100;                    // SMC particle count
  kernels::ResamplingScheme resampling = kernels::ResamplingScheme::systematic;  // SMC scheme
  double ess_threshold = 0.5;  // SMC: resample when ESS / particles falls below this
  bool verbose = false;                           // progress lines on stderr
};

}  // namespace kingman
