#include "kingman/kernels/rng.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

using namespace kingman::kernels;

// Known-answer vectors of Random123 (kat_vectors: philox4x32_10).
TEST(Philox, Random123KnownAnswers) {
  using Block = std::array<std::uint32_t, 4>;
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}),
            (Block{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(
      philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
      (Block{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(
      philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}),
      (Block{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

// Mean and variance of n draws within five standard errors of the truth.
template <typename Draw>
void check_moments(Draw draw, double mean, double variance, double fourth_central_moment) {
  constexpr int n = 400000;
  double sum = 0.0, sum_squares = 0.0;
  std::vector<double> values(n);
  for (double& x : values) {
    x = draw();
    sum += x;
  }
  const double sample_mean = sum / n;
  for (const double x : values) sum_squares += (x - sample_mean) * (x - sample_mean);
  const double sample_variance = sum_squares / (n - 1);
  EXPECT_NEAR(sample_mean, mean, 5.0 * std::sqrt(variance / n));
  // Var of the sample variance ~ (mu_4 - sigma^4) / n.
  EXPECT_NEAR(sample_variance, variance,
              5.0 * std::sqrt((fourth_central_moment - variance * variance) / n));
}

TEST(RandomStream, UniformIsInOpenIntervalWithRightMoments) {
  RandomStream stream(2024, 1, 2);
  for (int i = 0; i < 100000; ++i) {
    const double u = stream.uniform();
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
  check_moments([&] { return stream.uniform(); }, 0.5, 1.0 / 12.0, 1.0 / 80.0);
}

TEST(RandomStream, NormalAndExponentialMoments) {
  RandomStream stream(7, 3);
  check_moments([&] { return stream.normal(); }, 0.0, 1.0, 3.0);
  check_moments([&] { return stream.exponential(); }, 1.0, 1.0, 9.0);
}

TEST(RandomStream, BelowIsUniformOnItsRange) {
  RandomStream stream(8, 0);
  constexpr std::uint64_t k = 7;
  constexpr int n = 140000;
  std::array<int, k> counts{};
  for (int i = 0; i < n; ++i) {
    const std::uint64_t x = stream.below(k);
    ASSERT_LT(x, k);
    ++counts[x];
  }
  double chi_square = 0.0;
  const double expected = static_cast<double>(n) / k;
  for (const int c : counts) chi_square += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi_square, 22.46);  // chi-square(6) upper 0.001 quantile
  EXPECT_EQ(stream.below(1), 0u);
}

TEST(RandomStream, DeterministicPerCoordinates) {
  RandomStream a(1, 2, 3), b(1, 2, 3), c(1, 2, 4), d(1, 3, 3), e(2, 2, 3);
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    const std::uint64_t others[] = {c.next_u64(), d.next_u64(), e.next_u64()};
    for (const std::uint64_t y : others) EXPECT_NE(x, y);
  }
  const double u = keyed_uniform(1, 2, 3, 4);
  EXPECT_EQ(u, keyed_uniform(1, 2, 3, 4));
  EXPECT_NE(u, keyed_uniform(1, 2, 3, 5));
  EXPECT_GT(u, 0.0);
  EXPECT_LT(u, 1.0);
}

// A stream given its key (derived once for many streams) is the stream that derives it itself,
// through every kind of draw; a key belongs to (seed, b) and not to a.
TEST(RandomStream, SuppliedKeyGivesTheSameStream) {
  for (const std::uint64_t b : {0u, 1u, 7u, 400u}) {
    const RandomStream::Key key = RandomStream::key(11, b);
    for (const std::uint64_t a : {0u, 3u, 99u}) {
      RandomStream derived(11, a, b), supplied(11, a, b, key);
      for (int i = 0; i < 50; ++i) {
        EXPECT_EQ(derived.next_u64(), supplied.next_u64());
        EXPECT_EQ(derived.uniform(), supplied.uniform());
        EXPECT_EQ(derived.normal(), supplied.normal());
        EXPECT_EQ(derived.below(1000), supplied.below(1000));
      }
    }
    EXPECT_NE(key, RandomStream::key(11, b + 1));
    EXPECT_NE(key, RandomStream::key(12, b));
  }
}

TEST(KeyedUniform, Moments) {
  std::uint64_t pair = 0;
  check_moments([&] { return keyed_uniform(5, 0, pair++, 9); }, 0.5, 1.0 / 12.0, 1.0 / 80.0);
}

}  // namespace
