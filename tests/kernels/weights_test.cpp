#include "kingman/kernels/weights.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace {

using namespace kingman::kernels;
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Weights, NormalizeReturnsLogTotal) {
  const std::vector<double> log_weights = {std::log(1.0) + 700.0, std::log(3.0) + 700.0, -kInf};
  std::vector<double> weights(3);
  const double log_total = normalize_log_weights(log_weights, weights);
  EXPECT_NEAR(log_total, 700.0 + std::log(4.0), 1e-12);
  // log 3 + 700 carries an absolute rounding error of ~700 eps.
  EXPECT_NEAR(weights[0], 0.25, 1e-13);
  EXPECT_NEAR(weights[1], 0.75, 1e-13);
  EXPECT_EQ(weights[2], 0.0);
  EXPECT_NEAR(std::accumulate(weights.begin(), weights.end(), 0.0), 1.0, 1e-15);
}

TEST(Weights, NaNAndInfinityAreErrors) {
  std::vector<double> weights(3);
  const std::vector<double> with_nan = {0.0, std::nan(""), 1.0};
  EXPECT_THROW(normalize_log_weights(with_nan, weights), std::domain_error);
  const std::vector<double> with_inf = {0.0, kInf, 1.0};
  EXPECT_THROW(normalize_log_weights(with_inf, weights), std::domain_error);
  EXPECT_THROW(effective_sample_size_from_log_weights(with_nan), std::domain_error);
  std::vector<double> too_short(2);
  EXPECT_THROW(normalize_log_weights(std::vector<double>{0.0, 0.0, 0.0}, too_short),
               std::invalid_argument);
  EXPECT_THROW(effective_sample_size(std::vector<double>{0.5, std::nan("")}), std::domain_error);
  EXPECT_THROW(effective_sample_size(std::vector<double>{0.5, -0.1}), std::domain_error);
}

TEST(Weights, AllZeroWeights) {
  const std::vector<double> log_weights = {-kInf, -kInf};
  std::vector<double> weights = {7.0, 7.0};
  EXPECT_EQ(normalize_log_weights(log_weights, weights), -kInf);
  EXPECT_EQ(weights[0], 0.0);
  EXPECT_EQ(weights[1], 0.0);
  EXPECT_EQ(effective_sample_size(weights), 0.0);
  EXPECT_EQ(effective_sample_size_from_log_weights(log_weights), 0.0);
}

TEST(Weights, EffectiveSampleSize) {
  EXPECT_NEAR(effective_sample_size(std::vector<double>(10, 0.1)), 10.0, 1e-12);
  EXPECT_NEAR(effective_sample_size(std::vector<double>{0.0, 1.0, 0.0}), 1.0, 1e-15);
  // (0.5, 0.25, 0.25): 1 / (0.25 + 0.0625 + 0.0625) = 8/3; unnormalized input gives the same.
  EXPECT_NEAR(effective_sample_size(std::vector<double>{0.5, 0.25, 0.25}), 8.0 / 3.0, 1e-14);
  EXPECT_NEAR(effective_sample_size(std::vector<double>{2e-300, 1e-300, 1e-300}), 8.0 / 3.0, 1e-14);
  const std::vector<double> log_weights = {std::log(0.5) - 900.0, std::log(0.25) - 900.0,
                                           std::log(0.25) - 900.0};
  EXPECT_NEAR(effective_sample_size_from_log_weights(log_weights), 8.0 / 3.0, 1e-13);
}

}  // namespace
