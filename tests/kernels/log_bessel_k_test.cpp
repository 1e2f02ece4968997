// log K_nu(z) against the mpmath table (kernels/tools/make_bessel_table.py), across the branch
// switch points, and against closed forms.
#include "kingman/kernels/log_bessel_k.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using kingman::kernels::kLogBesselDebyeMinOrder;
using kingman::kernels::kLogBesselSteedMinArgument;
using kingman::kernels::log_bessel_k;

// The documented tolerance: 1e-12 relative in the log value, absolute near log K = 0.
double scaled_error(double got, double expected) {
  return std::fabs(got - expected) / std::max(1.0, std::fabs(expected));
}

struct Row {
  double nu, z, log_k;
};

std::vector<Row> read_table() {
  const std::string path = std::string(KINGMAN_TEST_DATA_DIR) + "/log_bessel_k_table.csv";
  std::ifstream in(path);
  std::vector<Row> rows;
  std::string line;
  if (!std::getline(in, line)) return rows;  // header
  while (std::getline(in, line)) {
    Row row{};
    if (std::sscanf(line.c_str(), "%lf,%lf,%lf", &row.nu, &row.z, &row.log_k) == 3) {
      rows.push_back(row);
    }
  }
  return rows;
}

TEST(LogBesselK, MatchesHighPrecisionTable) {
  const std::vector<Row> rows = read_table();
  ASSERT_GT(rows.size(), 3000u) << "missing or short tests/data/log_bessel_k_table.csv";
  double worst = 0.0;
  Row worst_row{};
  bool saw_debye = false, saw_temme = false, saw_steed = false;
  for (const Row& row : rows) {
    const double got = log_bessel_k(row.nu, row.z);
    const double error = scaled_error(got, row.log_k);
    EXPECT_LE(error, 1e-12) << "nu = " << row.nu << ", z = " << row.z << ": got " << got
                            << ", expected " << row.log_k;
    if (error > worst) {
      worst = error;
      worst_row = row;
    }
    if (std::fabs(row.nu) >= kLogBesselDebyeMinOrder) {
      saw_debye = true;
    } else if (row.z <= kLogBesselSteedMinArgument) {
      saw_temme = true;
    } else {
      saw_steed = true;
    }
  }
  EXPECT_TRUE(saw_debye && saw_temme && saw_steed);
  std::printf("log_bessel_k: %zu rows, max error %.3g (nu = %.17g, z = %.17g)\n", rows.size(),
              worst, worst_row.nu, worst_row.z);
}

// Both sides of every switch point agree: the step in the value is no larger than what the
// change in the argument explains (d log K / dz = -K_{nu-1}/K_nu - nu/z, |.| <= 1 + 2nu/z).
TEST(LogBesselK, ContinuousAcrossArgumentSwitch) {
  const double below = std::nextafter(kLogBesselSteedMinArgument, 0.0);
  const double at = kLogBesselSteedMinArgument;
  const double above = std::nextafter(kLogBesselSteedMinArgument, 4.0);
  for (const double nu : {0.0, 1e-3, 0.25, 1.0 / 3.0, 0.5, 0.7, 1.0, 2.5, 7.3, 12.0, 24.9}) {
    const double step_allowance = (1.0 + nu) * 4.5e-16;
    const double value = log_bessel_k(nu, at);
    EXPECT_LE(std::fabs(log_bessel_k(nu, below) - value),
              1e-13 * std::max(1.0, std::fabs(value)) + step_allowance)
        << "nu = " << nu;
    EXPECT_LE(std::fabs(log_bessel_k(nu, above) - value),
              1e-13 * std::max(1.0, std::fabs(value)) + step_allowance)
        << "nu = " << nu;
  }
}

TEST(LogBesselK, ContinuousAcrossOrderSwitch) {
  const double below = std::nextafter(kLogBesselDebyeMinOrder, 0.0);
  const double at = kLogBesselDebyeMinOrder;
  for (const double z : {1e-10, 1e-5, 0.1, 1.0, 2.0, 5.0, 16.6, 25.0, 60.0, 1e3, 1e5}) {
    const double value = log_bessel_k(at, z);
    // d log K / d nu ~ log(2 nu / z) is at most ~30 here; one ulp of nu moves log K by < 1e-13.
    EXPECT_LE(scaled_error(log_bessel_k(below, z), value), 2e-13) << "z = " << z;
    EXPECT_LE(scaled_error(log_bessel_k(-below, z), value), 2e-13) << "z = " << z;
  }
}

// nu = n + mu switches n at half-integers (mu = +-1/2).
TEST(LogBesselK, ContinuousAcrossHalfIntegerOrders) {
  for (const double half : {0.5, 1.5, 2.5, 10.5, 24.5}) {
    for (const double z : {1e-8, 0.5, 2.0, 3.0, 100.0}) {
      const double value = log_bessel_k(half, z);
      EXPECT_LE(scaled_error(log_bessel_k(std::nextafter(half, 0.0), z), value), 1e-13);
      EXPECT_LE(scaled_error(log_bessel_k(std::nextafter(half, 30.0), z), value), 1e-13);
    }
  }
}

// K_{1/2}(z) = sqrt(pi/(2z)) e^{-z}, K_{3/2}(z) = K_{1/2}(z) (1 + 1/z): exact closed forms over
// the whole argument range, through both small-order branches.
TEST(LogBesselK, HalfIntegerClosedForms) {
  for (double z = 1e-10; z <= 1e5; z *= 1.7) {
    const double half = 0.5 * std::log(std::numbers::pi / (2.0 * z)) - z;
    EXPECT_LE(scaled_error(log_bessel_k(0.5, z), half), 1e-14) << "z = " << z;
    EXPECT_LE(scaled_error(log_bessel_k(-0.5, z), half), 1e-14) << "z = " << z;
    EXPECT_LE(scaled_error(log_bessel_k(1.5, z), half + std::log1p(1.0 / z)), 1e-14) << "z = " << z;
  }
}

TEST(LogBesselK, EvenInOrder) {
  for (const double nu : {1e-3, 0.3, 3.7, 24.99, 25.0, 100.5, 499.0}) {
    for (const double z : {1e-9, 0.3, 2.0, 40.0, 1e4}) {
      EXPECT_EQ(log_bessel_k(nu, z), log_bessel_k(-nu, z));
    }
  }
}

// Beyond the tested range the branches keep working: finite, ordered values.
TEST(LogBesselK, FiniteFarOutsideTheTestedRange) {
  for (const double nu : {0.0, 0.5, 3.3, 30.0, 500.0, 2000.0}) {
    double previous = std::numeric_limits<double>::infinity();
    for (const double z : {1e-300, 1e-100, 1e-20, 1.0, 1e6, 1e9, 1e15}) {
      const double value = log_bessel_k(nu, z);
      EXPECT_TRUE(std::isfinite(value)) << "nu = " << nu << ", z = " << z;
      EXPECT_LT(value, previous) << "K decreases in z; nu = " << nu << ", z = " << z;
      previous = value;
    }
  }
  // For large z, log K ~ 0.5 log(pi / 2z) - z.
  EXPECT_NEAR(log_bessel_k(2.0, 1e9), 0.5 * std::log(std::numbers::pi / 2e9) - 1e9, 1e-6);
}

TEST(LogBesselK, EdgeCases) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(log_bessel_k(1.0, 0.0), inf);
  EXPECT_EQ(log_bessel_k(0.0, 0.0), inf);
  EXPECT_EQ(log_bessel_k(1.0, inf), -inf);
  EXPECT_TRUE(std::isnan(log_bessel_k(std::nan(""), 1.0)));
  EXPECT_TRUE(std::isnan(log_bessel_k(1.0, std::nan(""))));
  EXPECT_THROW(log_bessel_k(1.0, -1.0), std::domain_error);
}

}  // namespace
