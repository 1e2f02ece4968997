#include "kingman/io/json_report.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "kingman/error.hpp"
#include "kingman/kernels/simd_level.hpp"

namespace kingman {
namespace {

FitResult greedy_result() {
  FitResult result;
  result.algorithm = Algorithm::greedy_rate1;
  result.n = 3;
  result.d = 2;
  result.seed = std::numeric_limits<std::uint64_t>::max();  // must survive as an integer
  result.threads = 4;
  result.log_joint = 0.1 + 0.2;  // needs 17 digits to round-trip
  Particle particle;
  particle.log_weight = -1.5;
  particle.weight = 1.0;
  particle.tree = MergeTree{3, {{0, 1, 0.25}, {3, 2, 1.0 / 3.0}}};
  result.particles.push_back(particle);
  result.covariance_diagonal = {1.0, 2.5};
  result.leaf_variance = 0.01;
  result.pair_storage = PairStorage::bounded;
  result.seconds = 0.125;
  return result;
}

// Expects a NumericalError whose message names `field`.
void expect_numerical_error(const FitResult& result, const std::string& field) {
  try {
    to_json_report(result, std::nullopt);
    FAIL() << "wrote a non-finite " << field;
  } catch (const NumericalError& error) {
    EXPECT_NE(std::string(error.what()).find(field), std::string::npos) << error.what();
  }
}

TEST(JsonReport, DiscreteResultReportsItsModel) {
  FitResult result = greedy_result();
  result.likelihood = Likelihood::binary;
  result.categories = 2;
  result.equilibrium = {0.25, 0.75, 0.5, 0.5};
  result.mutation_rates = {1.0, 2.0};
  const nlohmann::json json = nlohmann::json::parse(to_json_report(result, std::nullopt));
  EXPECT_EQ(json.at("likelihood"), "binary");
  EXPECT_EQ(json.at("categories"), 2);
  EXPECT_EQ(json.at("equilibrium"), nlohmann::json::array({0.25, 0.75, 0.5, 0.5}));
  EXPECT_EQ(json.at("mutation_rates"), nlohmann::json::array({1.0, 2.0}));
  EXPECT_FALSE(json.contains("covariance_diagonal"));
  EXPECT_FALSE(json.contains("leaf_variance"));
}

TEST(JsonReport, GreedyResultHasTheDesignFields) {
  const std::string text = to_json_report(greedy_result(), std::nullopt);
  EXPECT_EQ(text.rfind("{\"algorithm\":", 0), 0u) << "keys keep the documented order";
  EXPECT_EQ(text.back(), '}') << "one line; the caller adds the newline";
  const nlohmann::json json = nlohmann::json::parse(text);
  EXPECT_EQ(json.at("algorithm"), "greedy-rate1");
  EXPECT_EQ(json.at("n"), 3);
  EXPECT_EQ(json.at("d"), 2);
  EXPECT_EQ(json.at("seed").get<std::uint64_t>(), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(json.at("threads"), 4);
  EXPECT_EQ(json.at("pin_threads"), false);
  EXPECT_EQ(json.at("simd"), std::string(kernels::to_string(kernels::simd_level())));
  EXPECT_EQ(json.at("pair_storage"), "bounded");
  EXPECT_TRUE(json.at("log_evidence").is_null());
  EXPECT_EQ(json.at("log_joint").get<double>(), 0.1 + 0.2);  // bit-exact round trip
  EXPECT_EQ(json.at("best_particle"), 0);
  ASSERT_EQ(json.at("particles").size(), 1u);
  const nlohmann::json& particle = json.at("particles")[0];
  EXPECT_EQ(particle.at("log_weight").get<double>(), -1.5);
  EXPECT_EQ(particle.at("weight").get<double>(), 1.0);
  ASSERT_EQ(particle.at("merges").size(), 2u);
  EXPECT_EQ(particle.at("merges")[1][0], 3);
  EXPECT_EQ(particle.at("merges")[1][1], 2);
  EXPECT_EQ(particle.at("merges")[1][2].get<double>(), 1.0 / 3.0);
  EXPECT_TRUE(json.at("ess").is_array());
  EXPECT_TRUE(json.at("ess").empty());
  EXPECT_TRUE(json.at("resampled_at").empty());
  EXPECT_EQ(json.at("covariance_diagonal"), nlohmann::json::array({1.0, 2.5}));
  EXPECT_EQ(json.at("leaf_variance").get<double>(), 0.01);
  EXPECT_TRUE(json.at("scores").is_object());
  EXPECT_TRUE(json.at("scores").empty());
  EXPECT_EQ(json.at("seconds").get<double>(), 0.125);
  EXPECT_EQ(json.at("likelihood"), "brownian");
  EXPECT_EQ(json.size(), 19u) << "no undocumented fields";
}

TEST(JsonReport, SmcResultWritesEvidenceScoresAndEveryParticle) {
  FitResult result = greedy_result();
  result.algorithm = Algorithm::postpost;
  result.pair_storage.reset();  // an SMC run reports no greedy pair storage
  result.log_evidence = -12.75;
  Particle second = result.particles[0];
  second.log_weight = -std::numeric_limits<double>::infinity();  // a dead particle is legal
  second.weight = 0.0;
  result.particles.push_back(second);
  result.best = 0;
  result.ess = {2.0, 1.5};
  result.resampled_at = {2};
  const TreeScores scores{0.75, 0.5, 1.0 / 3.0};
  const nlohmann::json json = nlohmann::json::parse(to_json_report(result, scores));
  EXPECT_EQ(json.at("algorithm"), "postpost");
  EXPECT_FALSE(json.contains("pair_storage"));
  EXPECT_EQ(json.at("log_evidence").get<double>(), -12.75);
  ASSERT_EQ(json.at("particles").size(), 2u);
  EXPECT_TRUE(json.at("particles")[1].at("log_weight").is_null());
  EXPECT_EQ(json.at("particles")[1].at("weight").get<double>(), 0.0);
  EXPECT_EQ(json.at("ess"), nlohmann::json::array({2.0, 1.5}));
  EXPECT_EQ(json.at("resampled_at"), nlohmann::json::array({2}));
  EXPECT_EQ(json.at("scores").at("dendrogram_purity").get<double>(), 0.75);
  EXPECT_EQ(json.at("scores").at("subtree_score").get<double>(), 0.5);
  EXPECT_EQ(json.at("scores").at("leave_one_out_accuracy").get<double>(), 1.0 / 3.0);
}

TEST(JsonReport, RefusesNonFiniteNumbers) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  FitResult result = greedy_result();
  result.particles[0].tree.merges[1].height = nan;
  expect_numerical_error(result, "particles[0].merges[1] height");

  result = greedy_result();
  result.log_joint = nan;
  expect_numerical_error(result, "log_joint");
  result.log_joint = inf;  // +inf is never a valid log density
  expect_numerical_error(result, "log_joint");

  result = greedy_result();
  result.log_evidence = nan;
  expect_numerical_error(result, "log_evidence");

  result = greedy_result();
  result.particles[0].weight = nan;
  expect_numerical_error(result, "particles[0].weight");

  result = greedy_result();
  result.ess = {1.0, nan};
  expect_numerical_error(result, "ess[1]");

  result = greedy_result();
  result.covariance_diagonal = {1.0, -inf};
  expect_numerical_error(result, "covariance_diagonal[1]");

  result = greedy_result();
  result.seconds = nan;
  expect_numerical_error(result, "seconds");

  result = greedy_result();
  EXPECT_THROW(to_json_report(result, TreeScores{nan, 0.0, 0.0}), NumericalError);

  // -inf in a log field is written as null rather than refused.
  result = greedy_result();
  result.log_joint = -inf;
  EXPECT_TRUE(
      nlohmann::json::parse(to_json_report(result, std::nullopt)).at("log_joint").is_null());
}

TEST(JsonReport, RejectsAnOutOfRangeBestParticle) {
  FitResult result = greedy_result();
  result.best = 1;
  EXPECT_THROW(to_json_report(result, std::nullopt), Error);
  result.particles.clear();
  result.best = 0;
  EXPECT_TRUE(
      nlohmann::json::parse(to_json_report(result, std::nullopt)).at("best_particle").is_null());
}

}  // namespace
}  // namespace kingman
