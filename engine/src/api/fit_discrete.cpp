#include "fit_discrete.hpp"

#include <iostream>
#include <string>
#include <utility>

#include "../scheduler/run_arena.hpp"
#include "kingman/error.hpp"
#include "kingman/inference/discrete_greedy.hpp"
#include "kingman/inference/discrete_smc.hpp"
#include "kingman/memory_budget.hpp"
#include "kingman/model/discrete_data.hpp"
#include "kingman/model/discrete_tree_likelihood.hpp"
#include "smc_memory.hpp"

namespace kingman::detail {

namespace {

bool is_discrete_smc(Algorithm algorithm) {
  return algorithm == Algorithm::priorprior || algorithm == Algorithm::priorpost ||
         algorithm == Algorithm::postpost || algorithm == Algorithm::race;
}

// SMC keeps, per particle, at most n live clusters of d * K message doubles and d flags (plus
// pointers), and PostPost the law-proposal system's step tables (smc_memory.hpp); refuse
// before allocating if that cannot fit.
double smc_bytes(const DiscreteData& data, const FitOptions& options) {
  const double per_cluster =
      static_cast<double>(data.d) * (8.0 * static_cast<double>(data.categories) + 1.0) + 96.0;
  // The race's rows of listed clocks, in two generations (race_engine.hpp).
  const double rows = options.algorithm == Algorithm::race ? 2.0 * 96.0 : 0.0;
  return static_cast<double>(options.particles) * static_cast<double>(data.n) *
             (per_cluster + 48.0 + 96.0 + rows) +
         law_proposal_table_bytes(options.algorithm, data.n, options.particles,
                                  run_threads(options.threads),
                                  step_table_bytes(run_memory_budget(options)));
}

void check_smc_memory(const DiscreteData& data, const FitOptions& options) {
  const std::size_t budget = run_memory_budget(options);
  const double bytes = smc_bytes(data, options);
  if (bytes > static_cast<double>(budget)) {
    std::string message = to_string(options.algorithm);
    message += " with ";
    message += std::to_string(options.particles);
    message += " particles on ";
    message += std::to_string(data.n);
    message += " x ";
    message += std::to_string(data.d);
    message += " needs about ";
    message += format_bytes(bytes);
    message += ", more than the memory budget (--max-memory) of ";
    message += format_bytes(static_cast<double>(budget));
    throw ResourceError(message);
  }
}

}  // namespace

FitResult fit_discrete(const Table& data, const FitOptions& options) {
  const std::string likelihood = to_string(options.likelihood);
  const bool smc = is_discrete_smc(options.algorithm);
  if (!is_greedy(options.algorithm) && !smc) {
    std::string message = "algorithm ";
    message += to_string(options.algorithm);
    message += " is not available with --likelihood ";
    message += likelihood;
    message +=
        "; use priorprior, priorpost, postpost or race, or greedy-rate1, greedy-minduration or "
        "greedy-maxprob";
    throw OptionError(message);
  }
  if (options.brownian.leaf_variance) {
    throw OptionError("--leaf-variance applies to --likelihood brownian, not " + likelihood);
  }
  const DiscreteData encoded = encode_discrete(data, options.likelihood, options.discrete);

  FitResult result;
  result.algorithm = options.algorithm;
  result.likelihood = options.likelihood;
  result.n = data.rows;
  result.d = data.cols;
  result.seed = options.seed;
  result.pin_threads = options.pin_threads;
  result.threads = 1;
  if (smc) {
    check_smc_memory(encoded, options);
    SmcOptions smc_options;
    smc_options.proposal = options.algorithm;
    smc_options.particles = options.particles;
    smc_options.seed = options.seed;
    smc_options.threads = options.threads;
    smc_options.pin_threads = options.pin_threads;
    smc_options.resampling = options.resampling;
    smc_options.ess_threshold = options.ess_threshold;
    smc_options.verbose = options.verbose;
    smc_options.step_table_bytes = step_table_bytes(run_memory_budget(options));
    SmcResult run = run_smc(encoded, smc_options);
    result.threads = run.threads;
    result.log_evidence = run.log_evidence;
    result.ess = std::move(run.ess);
    result.resampled_at = std::move(run.resampled_at);
    for (std::size_t s = 0; s < run.particles.size(); ++s) {
      result.particles.push_back(Particle{run.particles[s].log_weight, run.particles[s].weight,
                                          std::move(run.particles[s].tree)});
      // Highest weight wins; ties go to the lowest index.
      if (result.particles[s].weight > result.particles[result.best].weight) result.best = s;
    }
  } else {
    // The pairs are scored on the requested threads (generic_linkage.hpp).
    detail::RunArena arena(options.threads, options.pin_threads);
    MergeTree tree;
    const std::size_t budget = run_memory_budget(options);
    PairStorage used = PairStorage::automatic;
    arena.execute([&] {
      tree = run_greedy(encoded, options.algorithm, budget, options.pair_storage, &used);
    });
    result.threads = arena.threads();
    if (options.algorithm == Algorithm::greedy_rate1) result.pair_storage = used;
    result.particles.push_back(Particle{0.0, 1.0, std::move(tree)});
    result.best = 0;
  }
  result.log_joint = tree_density(encoded, result.best_tree()).log_joint();
  result.categories = encoded.categories;
  result.equilibrium = encoded.equilibrium;
  result.mutation_rates = encoded.mutation_rate;
  if (options.verbose) {
    std::cerr << "kingman: " << likelihood << " data, K = " << encoded.categories
              << (encoded.common_rate ? ", one mutation rate" : ", per-column mutation rates")
              << "\n";
  }
  return result;
}

std::size_t discrete_smc_memory_bytes(const Table& data, const FitOptions& options) {
  const DiscreteData encoded = encode_discrete(data, options.likelihood, options.discrete);
  return static_cast<std::size_t>(smc_bytes(encoded, options));
}

}  // namespace kingman::detail
