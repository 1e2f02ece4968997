#include "fit_discrete.hpp"

#include <iostream>
#include <string>

#include "kingman/error.hpp"
#include "kingman/inference/discrete_greedy.hpp"
#include "kingman/model/discrete_data.hpp"
#include "kingman/model/discrete_tree_likelihood.hpp"

namespace kingman::detail {

FitResult fit_discrete(const Table& data, const FitOptions& options) {
  const std::string likelihood = to_string(options.likelihood);
  if (!is_greedy(options.algorithm)) {
    throw OptionError("algorithm " + to_string(options.algorithm) + " is not yet available with " +
                      "--likelihood " + likelihood +
                      "; use greedy-rate1, greedy-minduration or greedy-maxprob");
  }
  if (options.brownian.leaf_variance) {
    throw OptionError("--leaf-variance applies to --likelihood brownian, not " + likelihood);
  }
  const DiscreteData encoded = encode_discrete(data, options.likelihood, options.discrete);
  MergeTree tree = run_greedy(encoded, options.algorithm);

  FitResult result;
  result.algorithm = options.algorithm;
  result.likelihood = options.likelihood;
  result.n = data.rows;
  result.d = data.cols;
  result.seed = options.seed;
  result.threads = 1;
  result.log_joint = tree_density(encoded, tree).log_joint();
  result.particles.push_back(Particle{0.0, 1.0, std::move(tree)});
  result.best = 0;
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

}  // namespace kingman::detail
