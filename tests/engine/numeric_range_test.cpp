// check_brownian_range (numeric_range.hpp): data whose squared differences would overflow or
// underflow double precision are refused with the column and rows named; everything else,
// missing entries included, passes untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kingman/error.hpp"
#include "kingman/model/numeric_range.hpp"

namespace kingman {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The message of the InputError that check_brownian_range throws, or "" if it passes.
std::string refusal(const std::vector<double>& values, std::size_t rows, std::size_t cols) {
  try {
    check_brownian_range(values.data(), rows, cols, "data.csv");
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

TEST(BrownianRange, OrdinaryDataZerosAndMissingEntriesPass) {
  std::mt19937_64 engine(3);
  std::normal_distribution<double> normal(0.0, 1e3);
  std::vector<double> x(200 * 5);
  for (double& v : x) v = normal(engine);
  EXPECT_EQ(refusal(x, 200, 5), "");
  EXPECT_EQ(refusal({0, 0, 0, 0}, 2, 2), "");
  EXPECT_EQ(refusal({1, kNaN, kNaN, kNaN, 2, kNaN}, 3, 2), "");  // one column all missing
  // Equal entries are not this check's concern (duplicates have their own).
  EXPECT_EQ(refusal({1e-200, 1e-200, 1e-200}, 3, 1), "");
}

TEST(BrownianRange, SpreadsAtTheLimitPassAndAboveItAreRefusedWithColumnAndRows) {
  const std::size_t rows = 3;
  const double largest = largest_brownian_spread(rows);
  EXPECT_DOUBLE_EQ(largest, 0x1p250 / 3.0);
  EXPECT_EQ(refusal({0, 1, 0, 2, largest, 3}, rows, 2), "");
  const std::string message = refusal({0, 1, 0, 2, 3e200, 0, 1, -4e200, 2}, rows, 3);
  EXPECT_NE(message.find("data.csv: column 2 spans -4e+200 (row 3) to 3e+200 (row 2)"),
            std::string::npos)
      << message;
  // An infinite spread (entries near the largest double of both signs) is refused too.
  const double big = std::numeric_limits<double>::max();
  EXPECT_NE(refusal({big, -big}, 2, 1).find("column 1"), std::string::npos);
}

// Equal entries of a huge magnitude: clusters' means of them differ by rounding, ~2^-52 of it.
TEST(BrownianRange, MagnitudesCountForTheRoundingBetweenMeans) {
  EXPECT_EQ(refusal({1e80, 1e80, 1e80}, 3, 1), "");  // 2.2e64 of rounding: far inside
  const std::string message = refusal({1, 3e100, 2, 3e100, 3, 3e100}, 3, 2);
  EXPECT_NE(message.find("column 2 holds 3e+100 (row 1)"), std::string::npos) << message;
}

TEST(BrownianRange, ColumnsWithinTheLimitAloneCanBeTooLargeTogether) {
  const std::size_t rows = 2;
  const double spread = 0.8 * largest_brownian_spread(rows);
  EXPECT_EQ(refusal({0, spread}, rows, 1), "");  // 0.64 of the limit on squares
  const std::string message = refusal({0, 0, spread, spread}, rows, 2);  // 1.28 of it
  EXPECT_NE(message.find("together"), std::string::npos) << message;
}

TEST(BrownianRange, DifferencesWhoseSquareUnderflowsAreRefusedWithBothRows) {
  // Differences of at least 2^-500 pass (their squares are normal numbers).
  EXPECT_EQ(refusal({0.0, kSmallestBrownianDifference, 1.0}, 3, 1), "");
  const std::string message = refusal({5.0, 1.0, 2e-200, 2.0, 1e-200, 3.0}, 3, 2);
  EXPECT_NE(message.find("column 1 has 1e-200 (row 3) and 2e-200 (row 2)"), std::string::npos)
      << message;
  // Entries of magnitude ~1e-140 that are neighbouring doubles differ by ~2e-156: refused.
  const double small = 1e-140;
  const double next = std::nextafter(small, 1.0);
  EXPECT_NE(refusal({small, next}, 2, 1).find("differ by"), std::string::npos);
  // At ~1e-130 neighbouring doubles differ by ~2e-146, above 2^-500: they pass.
  EXPECT_EQ(refusal({1e-130, std::nextafter(1e-130, 1.0)}, 2, 1), "");
  // A subnormal entry next to 0.
  EXPECT_NE(refusal({0.0, 1e-310}, 2, 1).find("row 1"), std::string::npos);
}

// check_smc_scale: the sum of the columns' squared spreads times n (n - 1) / 2 against 1e32.
TEST(BrownianRange, SmcScaleIsTheLargestSquaredDistanceTimesTheLargestRate) {
  auto smc_refusal = [](const std::vector<double>& values, std::size_t rows, std::size_t cols) {
    try {
      check_smc_scale(values.data(), rows, cols, "data.csv");
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  // Three rows: rate 3. Spreads 3e15 and 4e15 (missing entry skipped): 2.5e31 * 3 = 7.5e31.
  EXPECT_EQ(smc_refusal({0, 0, 3e15, kNaN, 1, 4e15}, 3, 2), "");
  // Spreads 3e15 and 5e15: 3.4e31 * 3 = 1.02e32.
  const std::string message = smc_refusal({0, 0, 3e15, kNaN, 1, 5e15}, 3, 2);
  EXPECT_NE(message.find("data.csv: the columns' spreads squared sum to 3.4e+31, so with 3 rows"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("reaches 1.02e+32"), std::string::npos) << message;
}

}  // namespace
}  // namespace kingman
