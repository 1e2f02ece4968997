// Equilibrium distributions and mutation rates of the binary / multinomial likelihood.
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "kingman/error.hpp"
#include "kingman/model/discrete_data.hpp"

namespace kingman {

namespace {

// The probabilities of a given equilibrium as a K-vector, checked.
std::vector<double> given_probabilities(const std::vector<double>& given, std::size_t categories) {
  std::vector<double> q;
  if (given.size() == 1 && categories == 2) {
    q = {1.0 - given[0], given[0]};  // binary: one number is the probability of value 1
    if (given[0] > 0.0 && q[0] == 1.0) {
      throw OptionError(fmt::format(
          "--equilibrium: P(value 1) = {} leaves P(value 0) = 1 - {}, which rounds to 1; give "
          "both probabilities instead (they are renormalized when their sum is within 1e-9 of 1)",
          given[0], given[0]));
    }
  } else if (given.size() == categories) {
    q = given;
  } else {
    throw OptionError(fmt::format(
        "--equilibrium has {} value(s) but the alphabet has K = {} categories; give 'data', "
        "'uniform', K probabilities{}",
        given.size(), categories, categories == 2 ? " or one probability of value 1" : ""));
  }
  double sum = 0.0;
  for (double p : q) {
    if (!(p > 0.0 && p < 1.0)) {
      throw OptionError(fmt::format(
          "--equilibrium: every probability must lie strictly between 0 and 1 (a state of "
          "probability 0 could never be observed), got {}",
          p));
    }
    sum += p;
  }
  if (std::abs(sum - 1.0) > 1e-9) {
    throw OptionError(
        fmt::format("--equilibrium: the {} probabilities sum to {}, not 1", categories, sum));
  }
  for (std::size_t k = 0; k < q.size(); ++k) {
    q[k] /= sum;
    if (q[k] < DiscreteData::kSmallestProbability) {
      throw OptionError(fmt::format(
          "--equilibrium: the probability of value {} is {}, below the smallest accepted, {} "
          "(a leaf showing value k carries the message 1/q_k, and products of two such messages "
          "would overflow)",
          k, q[k], DiscreteData::kSmallestProbability));
    }
  }
  return q;
}

}  // namespace

std::vector<double> choose_equilibrium(const std::vector<std::int32_t>& values, std::size_t n,
                                       std::size_t d, std::size_t categories,
                                       const Equilibrium& equilibrium) {
  std::vector<double> q(d * categories, 1.0 / static_cast<double>(categories));
  switch (equilibrium.kind) {
    case EquilibriumKind::uniform:
      break;
    case EquilibriumKind::given: {
      const std::vector<double> row = given_probabilities(equilibrium.probabilities, categories);
      for (std::size_t j = 0; j < d; ++j)
        for (std::size_t k = 0; k < categories; ++k) q[j * categories + k] = row[k];
      break;
    }
    case EquilibriumKind::data: {
      // Add-one smoothing: the posterior mean under a uniform Dirichlet prior.
      std::vector<double> counts(d * categories, 1.0);
      std::vector<double> totals(d, static_cast<double>(categories));
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < d; ++j) {
          const std::int32_t v = values[i * d + j];
          if (v == DiscreteData::kMissing) continue;
          counts[j * categories + static_cast<std::size_t>(v)] += 1.0;
          totals[j] += 1.0;
        }
      }
      for (std::size_t j = 0; j < d; ++j)
        for (std::size_t k = 0; k < categories; ++k)
          q[j * categories + k] = counts[j * categories + k] / totals[j];
      break;
    }
  }
  return q;
}

std::vector<double> choose_mutation_rates(const std::vector<double>& rates, std::size_t d) {
  if (rates.empty()) return std::vector<double>(d, 1.0);
  for (std::size_t j = 0; j < rates.size(); ++j) {
    if (!(rates[j] > 0.0) || !std::isfinite(rates[j])) {
      throw OptionError(fmt::format("--mutation-rate: value {} ({}) must be a finite number > 0",
                                    j + 1, rates[j]));
    }
  }
  if (rates.size() == 1) return std::vector<double>(d, rates[0]);
  if (rates.size() != d) {
    throw OptionError(fmt::format(
        "--mutation-rate has {} values but the data has {} columns; give one rate for every "
        "column or a single rate for all",
        rates.size(), d));
  }
  return rates;
}

}  // namespace kingman
