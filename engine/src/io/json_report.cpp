#include "kingman/io/json_report.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kingman/error.hpp"
#include "kingman/kernels/simd_level.hpp"

namespace kingman {

namespace {

// Keys stay in the documented order rather than sorted.
using Json = nlohmann::ordered_json;

// nlohmann writes NaN and infinities as null without complaint; we refuse instead.
Json finite_number(double value, const std::string& field) {
  if (!std::isfinite(value)) {
    throw NumericalError(fmt::format("json report: {} is {}, not a finite number", field, value));
  }
  return value;
}

// A log-density or log-weight: -inf (probability zero) is legal and written as null.
Json log_number(double value, const std::string& field) {
  if (value == -std::numeric_limits<double>::infinity()) return nullptr;
  return finite_number(value, field);
}

Json finite_array(const std::vector<double>& values, const std::string& field) {
  Json array = Json::array();
  for (std::size_t i = 0; i < values.size(); ++i) {
    array.push_back(finite_number(values[i], fmt::format("{}[{}]", field, i)));
  }
  return array;
}

}  // namespace

std::string to_json_report(const FitResult& result, const std::optional<TreeScores>& scores) {
  if (!result.particles.empty() && result.best >= result.particles.size()) {
    throw Error(fmt::format("json report: best particle {} of only {} particles", result.best,
                            result.particles.size()));
  }
  Json report;
  report["algorithm"] = to_string(result.algorithm);
  report["n"] = result.n;
  report["d"] = result.d;
  report["seed"] = result.seed;
  report["threads"] = result.threads;
  report["pin_threads"] = result.pin_threads;
  // The copy of the array kernels that ran (kernels/simd_level.hpp): every copy gives the same
  // values, but timings depend on it.
  report["simd"] = std::string(kernels::to_string(kernels::simd_level()));
  // Brownian greedy runs: whether the pair scores were all kept ("full") or each cluster's best
  // ("bounded"): the same tree, different time and memory.
  if (result.pair_storage) report["pair_storage"] = to_string(*result.pair_storage);
  report["log_evidence"] =
      result.log_evidence ? log_number(*result.log_evidence, "log_evidence") : Json(nullptr);
  report["log_joint"] = log_number(result.log_joint, "log_joint");
  report["best_particle"] = result.particles.empty() ? Json(nullptr) : Json(result.best);

  Json particles = Json::array();
  for (std::size_t p = 0; p < result.particles.size(); ++p) {
    const Particle& particle = result.particles[p];
    const std::string field = fmt::format("particles[{}]", p);
    Json merges = Json::array();
    for (std::size_t i = 0; i < particle.tree.merges.size(); ++i) {
      const Merge& merge = particle.tree.merges[i];
      merges.push_back(Json::array(
          {merge.left, merge.right,
           finite_number(merge.height, fmt::format("{}.merges[{}] height", field, i))}));
    }
    Json entry;
    entry["log_weight"] = log_number(particle.log_weight, field + ".log_weight");
    entry["weight"] = finite_number(particle.weight, field + ".weight");
    entry["merges"] = std::move(merges);
    particles.push_back(std::move(entry));
  }
  report["particles"] = std::move(particles);

  report["ess"] = finite_array(result.ess, "ess");
  report["resampled_at"] = result.resampled_at;
  // The model as used: Brownian runs report Lambda and v0, discrete ones q and the rates.
  report["likelihood"] = to_string(result.likelihood);
  if (result.likelihood == Likelihood::brownian) {
    report["covariance_diagonal"] = finite_array(result.covariance_diagonal, "covariance_diagonal");
    report["leaf_variance"] = finite_number(result.leaf_variance, "leaf_variance");
  } else {
    report["categories"] = result.categories;
    report["equilibrium"] = finite_array(result.equilibrium, "equilibrium");
    report["mutation_rates"] = finite_array(result.mutation_rates, "mutation_rates");
  }

  Json score_object = Json::object();
  if (scores) {
    score_object["dendrogram_purity"] =
        finite_number(scores->dendrogram_purity, "scores.dendrogram_purity");
    score_object["subtree_score"] = finite_number(scores->subtree_score, "scores.subtree_score");
    score_object["leave_one_out_accuracy"] =
        finite_number(scores->leave_one_out_accuracy, "scores.leave_one_out_accuracy");
  }
  report["scores"] = std::move(score_object);
  report["seconds"] = finite_number(result.seconds, "seconds");
  return report.dump();  // one line, no newline: callers add it, as for to_newick
}

}  // namespace kingman
