#include "kingman/kernels/log_sum_exp.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kingman/kernels/rng.hpp"

namespace {

using namespace kingman::kernels;
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(LogSumExp, BasicValues) {
  const std::vector<double> values = {std::log(1.0), std::log(2.0), std::log(3.0)};
  EXPECT_NEAR(log_sum_exp(values), std::log(6.0), 1e-15);
  const std::vector<double> huge = {1000.0, 1000.0};  // exp would overflow
  EXPECT_NEAR(log_sum_exp(huge), 1000.0 + std::log(2.0), 1e-12);
  const std::vector<double> tiny = {-1000.0, -1001.0};  // exp would underflow
  EXPECT_NEAR(log_sum_exp(tiny), -1000.0 + std::log1p(std::exp(-1.0)), 1e-12);
  const std::vector<double> one = {-3.5};
  EXPECT_EQ(log_sum_exp(one), -3.5);
}

TEST(LogSumExp, InfinitiesAndNaN) {
  EXPECT_EQ(log_sum_exp(std::vector<double>{}), -kInf);
  EXPECT_EQ(log_sum_exp(std::vector<double>{-kInf, -kInf}), -kInf);
  EXPECT_EQ(log_sum_exp(std::vector<double>{-kInf, 2.0}), 2.0);
  EXPECT_EQ(log_sum_exp(std::vector<double>{1.0, kInf, -kInf}), kInf);
  EXPECT_TRUE(std::isnan(log_sum_exp(std::vector<double>{1.0, std::nan("")})));
  EXPECT_EQ(log_add_exp(-kInf, -kInf), -kInf);
  EXPECT_EQ(log_add_exp(-kInf, 1.5), 1.5);
  EXPECT_EQ(log_add_exp(kInf, 1.5), kInf);
  EXPECT_TRUE(std::isnan(log_add_exp(std::nan(""), 1.0)));
  EXPECT_NEAR(log_add_exp(std::log(2.0), std::log(5.0)), std::log(7.0), 1e-15);
}

TEST(LogSumExpAccumulator, MatchesSpanVersion) {
  RandomStream stream(3, 4);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> values(1 + trial * 7);
    LogSumExpAccumulator accumulator;
    for (double& x : values) {
      // Wide spread, occasional -inf, increasing and decreasing maxima.
      x = stream.uniform() < 0.1 ? -kInf : 800.0 * (stream.uniform() - 0.5);
      accumulator.add(x);
    }
    const double expected = log_sum_exp(values);
    EXPECT_NEAR(accumulator.value(), expected, 1e-12 * std::max(1.0, std::fabs(expected)));
  }
}

TEST(LogSumExpAccumulator, EdgeCases) {
  LogSumExpAccumulator accumulator;
  EXPECT_EQ(accumulator.value(), -kInf);
  accumulator.add(-kInf);
  EXPECT_EQ(accumulator.value(), -kInf);
  accumulator.add(0.0);
  accumulator.add(0.0);
  EXPECT_NEAR(accumulator.value(), std::log(2.0), 1e-15);
  accumulator.add(kInf);
  EXPECT_EQ(accumulator.value(), kInf);
  accumulator.add(5.0);
  EXPECT_EQ(accumulator.value(), kInf);
  accumulator.add(std::nan(""));
  EXPECT_TRUE(std::isnan(accumulator.value()));
  accumulator.reset();
  accumulator.add(1.0);
  EXPECT_EQ(accumulator.value(), 1.0);
}

}  // namespace
