#include "kingman/options.hpp"

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "kingman/error.hpp"

namespace kingman {

namespace {

constexpr std::array<std::pair<Algorithm, const char*>, 10> kAlgorithmNames{{
    {Algorithm::greedy_rate1, "greedy-rate1"},
    {Algorithm::greedy_minduration, "greedy-minduration"},
    {Algorithm::greedy_maxprob, "greedy-maxprob"},
    {Algorithm::mgreedy, "mgreedy"},
    {Algorithm::priorprior, "priorprior"},
    {Algorithm::priorpost, "priorpost"},
    {Algorithm::postpost, "postpost"},
    {Algorithm::mpost1, "mpost1"},
    {Algorithm::mpost2, "mpost2"},
    {Algorithm::race, "race"},
}};

constexpr std::array<std::pair<CovarianceKind, const char*>, 5> kCovarianceNames{{
    {CovarianceKind::learned, "learned"},
    {CovarianceKind::identity, "identity"},
    {CovarianceKind::isotropic, "isotropic"},
    {CovarianceKind::diagonal, "diagonal"},
    {CovarianceKind::full, "full"},
}};

constexpr std::array<std::pair<kernels::ResamplingScheme, const char*>, 4> kResamplingNames{{
    {kernels::ResamplingScheme::systematic, "systematic"},
    {kernels::ResamplingScheme::stratified, "stratified"},
    {kernels::ResamplingScheme::residual, "residual"},
    {kernels::ResamplingScheme::multinomial, "multinomial"},
}};

constexpr std::array<std::pair<Likelihood, const char*>, 3> kLikelihoodNames{{
    {Likelihood::brownian, "brownian"},
    {Likelihood::binary, "binary"},
    {Likelihood::multinomial, "multinomial"},
}};

constexpr std::array<std::pair<PairStorage, const char*>, 3> kPairStorageNames{{
    {PairStorage::automatic, "auto"},
    {PairStorage::full, "full"},
    {PairStorage::bounded, "bounded"},
}};

template <typename Enum, std::size_t N>
std::string joined_names(const std::array<std::pair<Enum, const char*>, N>& names) {
  std::string out;
  for (const auto& [value, name] : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// Parses one whole token as a finite double (no trailing text).
bool parse_finite(const std::string& token, double& value) {
  if (token.empty()) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtod(token.c_str(), &end);
  return end == token.c_str() + token.size() && errno == 0 && std::isfinite(value);
}

}  // namespace

bool is_greedy(Algorithm algorithm) {
  return algorithm == Algorithm::greedy_rate1 || algorithm == Algorithm::greedy_minduration ||
         algorithm == Algorithm::greedy_maxprob || algorithm == Algorithm::mgreedy;
}

std::string to_string(Algorithm algorithm) {
  for (const auto& [value, name] : kAlgorithmNames)
    if (value == algorithm) return name;
  return "unknown";
}

Algorithm parse_algorithm(const std::string& name) {
  for (const auto& [value, known] : kAlgorithmNames)
    if (name == known) return value;
  throw OptionError("unknown algorithm '" + name + "'; expected one of " +
                    joined_names(kAlgorithmNames));
}

std::string to_string(CovarianceKind kind) {
  for (const auto& [value, name] : kCovarianceNames)
    if (value == kind) return name;
  return "unknown";
}

CovarianceKind parse_covariance(const std::string& name) {
  for (const auto& [value, known] : kCovarianceNames)
    if (name == known) return value;
  throw OptionError("unknown covariance '" + name + "'; expected one of " +
                    joined_names(kCovarianceNames));
}

std::string to_string(kernels::ResamplingScheme scheme) {
  for (const auto& [value, name] : kResamplingNames)
    if (value == scheme) return name;
  return "unknown";
}

kernels::ResamplingScheme parse_resampling(const std::string& name) {
  for (const auto& [value, known] : kResamplingNames)
    if (name == known) return value;
  throw OptionError("unknown resampling scheme '" + name + "'; expected one of " +
                    joined_names(kResamplingNames));
}

std::string to_string(Likelihood likelihood) {
  for (const auto& [value, name] : kLikelihoodNames)
    if (value == likelihood) return name;
  return "unknown";
}

Likelihood parse_likelihood(const std::string& name) {
  for (const auto& [value, known] : kLikelihoodNames)
    if (name == known) return value;
  throw OptionError("unknown likelihood '" + name + "'; expected one of " +
                    joined_names(kLikelihoodNames));
}

std::string to_string(PairStorage storage) {
  for (const auto& [value, name] : kPairStorageNames)
    if (value == storage) return name;
  return "unknown";
}

PairStorage parse_pair_storage(const std::string& name) {
  for (const auto& [value, known] : kPairStorageNames)
    if (name == known) return value;
  throw OptionError("unknown pair storage '" + name + "' (--pair-storage); expected one of " +
                    joined_names(kPairStorageNames));
}

std::vector<double> parse_number_list(const std::string& text, const std::string& option) {
  std::vector<double> numbers;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string token =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    double value = 0.0;
    if (!parse_finite(token, value)) {
      throw OptionError(option + ": '" + token + "' in '" + text +
                        "' is not a finite number (expected a number or a comma-separated list)");
    }
    numbers.push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return numbers;
}

Equilibrium parse_equilibrium(const std::string& text) {
  if (text == "data") return {EquilibriumKind::data, {}};
  if (text == "uniform") return {EquilibriumKind::uniform, {}};
  return {EquilibriumKind::given, parse_number_list(text, "--equilibrium")};
}

}  // namespace kingman
