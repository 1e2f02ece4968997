// The vectorized array kernels against libm and the scalar fixed-order Bessel fit: log_array,
// exp_array, sqrt_array and max_array (vector_math.hpp), and LogBesselKFixedOrder::terms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "kingman/kernels/fixed_order_bessel.hpp"
#include "kingman/kernels/log_bessel_k.hpp"
#include "kingman/kernels/vector_math.hpp"

namespace kingman::kernels {
namespace {

// Arguments spread over the whole normal range in log scale, plus values next to 1 and to
// powers of two (where the mantissa reduction switches).
std::vector<double> log_arguments() {
  std::mt19937_64 engine(21);
  std::uniform_real_distribution<double> exponent(-1000.0, 1000.0);
  std::uniform_real_distribution<double> near(-1e-6, 1e-6);
  std::vector<double> x;
  for (int k = 0; k < 20000; ++k) x.push_back(std::exp2(exponent(engine)));
  for (int k = 0; k < 2000; ++k) x.push_back(1.0 + near(engine));
  for (int e = -1020; e <= 1020; e += 7) {
    for (double m :
         {1.0, std::nextafter(1.0, 0.0), std::sqrt(2.0), std::nextafter(std::sqrt(2.0), 2.0)})
      x.push_back(std::ldexp(m, e));
  }
  x.push_back(std::numeric_limits<double>::min());
  x.push_back(std::numeric_limits<double>::max());
  return x;
}

// log: within 4e-16 * max(1, |log x|) of libm (itself within an ulp), i.e. a couple of ulps of
// the result, or of 1 where log x is small (then the error is relative to the mantissa's log).
TEST(VectorMath, LogArrayMatchesLibm) {
  const std::vector<double> x = log_arguments();
  std::vector<double> out(x.size());
  log_array(x.data(), out.data(), x.size());
  double worst = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const double want = std::log(x[k]);
    const double error = std::abs(out[k] - want) / std::max(1.0, std::abs(want));
    worst = std::max(worst, error);
    EXPECT_LE(error, 4e-16) << "x=" << x[k];
  }
  std::printf("log_array: worst error %.3g (relative to max(1, |log x|))\n", worst);
}

// exp: within 6e-16 relative (three ulps at most) of libm over [-708, 709]: the series and the
// scaling round a few times, and the reduced argument r = x - k ln 2 carries |k| ulps of the
// low part of ln 2 (below 1e-16 relative for |k| <= 1022); 0 below -708.39.
TEST(VectorMath, ExpArrayMatchesLibm) {
  std::mt19937_64 engine(22);
  std::uniform_real_distribution<double> argument(-708.0, 709.0);
  std::vector<double> x;
  for (int k = 0; k < 20000; ++k) x.push_back(argument(engine));
  for (double v : {0.0, -0.0, 1e-300, -1e-300, 0.5 * std::log(2.0), -0.5 * std::log(2.0), 1.0, -1.0,
                   700.0, 709.0, -708.0})
    x.push_back(v);
  std::vector<double> out(x.size());
  exp_array(x.data(), out.data(), x.size());
  double worst = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const double want = std::exp(x[k]);
    const double error = std::abs(out[k] - want) / want;
    worst = std::max(worst, error);
    EXPECT_LE(error, 6e-16) << "x=" << x[k];
  }
  std::printf("exp_array: worst relative error %.3g\n", worst);
  const std::vector<double> tiny = {-708.5, -720.0, -745.0, -1e300};
  std::vector<double> zero(tiny.size());
  exp_array(tiny.data(), zero.data(), tiny.size());
  for (double v : zero) EXPECT_EQ(v, 0.0);
}

// exp_with_complement_array against libm's exp and -expm1, across (-708, 0] and close to 0,
// where 1 - exp(y) would cancel: both within a few ulps relative.
TEST(VectorMath, ExpWithComplementMatchesLibm) {
  std::mt19937_64 engine(23);
  std::uniform_real_distribution<double> argument(-708.0, 0.0), exponent(-300.0, 0.0);
  std::vector<double> y;
  for (int k = 0; k < 20000; ++k) y.push_back(argument(engine));
  for (int k = 0; k < 20000; ++k) y.push_back(-std::pow(10.0, exponent(engine)));
  for (double v : {0.0, -0.0, -1e-300, -0.5 * std::log(2.0), -std::log(2.0), -1.0, -708.0})
    y.push_back(v);
  std::vector<double> e(y.size()), complement(y.size());
  exp_with_complement_array(y.data(), e.data(), complement.data(), y.size());
  double worst_exp = 0.0, worst_complement = 0.0;
  for (std::size_t k = 0; k < y.size(); ++k) {
    const double want_exp = std::exp(y[k]), want_complement = -std::expm1(y[k]);
    const double exp_error = std::abs(e[k] - want_exp) / want_exp;
    const double complement_error =
        want_complement == 0.0 ? std::abs(complement[k])
                               : std::abs(complement[k] - want_complement) / want_complement;
    worst_exp = std::max(worst_exp, exp_error);
    worst_complement = std::max(worst_complement, complement_error);
    EXPECT_LE(exp_error, 6e-16) << "y=" << y[k];
    EXPECT_LE(complement_error, 6e-16) << "y=" << y[k];
  }
  std::printf("exp_with_complement_array: worst relative errors %.3g, %.3g\n", worst_exp,
              worst_complement);
  // Below -708: taken as -708.
  const std::vector<double> tiny = {-720.0, -1e300};
  std::vector<double> small(2), one(2);
  exp_with_complement_array(tiny.data(), small.data(), one.data(), tiny.size());
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_LE(small[k], 4e-308);
    EXPECT_EQ(one[k], 1.0);
  }
}

TEST(VectorMath, SqrtArrayIsCorrectlyRounded) {
  std::vector<double> x = log_arguments();
  x.push_back(0.0);
  std::vector<double> out(x.size());
  sqrt_array(x.data(), out.data(), x.size());
  for (std::size_t k = 0; k < x.size(); ++k) EXPECT_EQ(out[k], std::sqrt(x[k]));
}

// A value is the same bits wherever it sits: in a whole block of eight, or in the last, partial
// block that the kernels finish through a padded copy; for every count 1 ... 20 and in place.
TEST(VectorMath, ArrayKernelsGiveTheSameBitsInEveryPosition) {
  std::mt19937_64 engine(23);
  std::uniform_real_distribution<double> argument(-700.0, 700.0);
  std::vector<double> x(64);
  for (double& v : x) v = argument(engine);
  std::vector<double> positive(64);
  for (std::size_t k = 0; k < 64; ++k) positive[k] = std::exp2(x[k]);
  std::vector<double> exp_all(64), log_all(64), sqrt_all(64), pair_all(64), complement_all(64);
  std::vector<double> negative(64);
  for (std::size_t k = 0; k < 64; ++k) negative[k] = -std::abs(x[k]);
  exp_with_complement_array(negative.data(), pair_all.data(), complement_all.data(), 64);
  exp_array(x.data(), exp_all.data(), 64);
  log_array(positive.data(), log_all.data(), 64);
  sqrt_array(positive.data(), sqrt_all.data(), 64);
  for (std::size_t count = 1; count <= 20; ++count) {
    for (std::size_t first : {std::size_t{0}, std::size_t{5}, 64 - count}) {
      std::vector<double> part(x.begin() + first, x.begin() + first + count);
      exp_array(part.data(), part.data(), count);  // in place
      std::vector<double> logs(count), roots(count);
      log_array(positive.data() + first, logs.data(), count);
      sqrt_array(positive.data() + first, roots.data(), count);
      std::vector<double> exps(count), complements(count);
      exp_with_complement_array(negative.data() + first, exps.data(), complements.data(), count);
      for (std::size_t k = 0; k < count; ++k) {
        EXPECT_EQ(exps[k], pair_all[first + k]) << "count " << count << ", entry " << first + k;
        EXPECT_EQ(complements[k], complement_all[first + k]) << "count " << count;
        EXPECT_EQ(part[k], exp_all[first + k]) << "count " << count << ", entry " << first + k;
        EXPECT_EQ(logs[k], log_all[first + k]) << "count " << count << ", entry " << first + k;
        EXPECT_EQ(roots[k], sqrt_all[first + k]) << "count " << count << ", entry " << first + k;
      }
    }
  }
}

// The batched Bessel terms against the scalar fit (same pieces, logs a few ulps apart) and
// against log_bessel_k itself, inside and outside the fitted range, for the orders of d = 1 to
// d = 1000; `out` may alias `x`.
// The largest entry for every count 0..40 (each tail length of the four lanes), wherever it
// sits; NaN entries are passed over, and an empty or all-NaN array gives -inf.
TEST(VectorMath, MaxArrayFindsTheLargestEntryAndSkipsNaN) {
  std::mt19937_64 engine(5);
  std::normal_distribution<double> normal;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t count = 0; count <= 40; ++count) {
    std::vector<double> x(count);
    for (double& v : x) v = normal(engine);
    for (std::size_t at = 0; at < count; ++at) {
      std::vector<double> y = x;
      y[at] = 10.0;  // the largest, at every position in turn
      if (count > 1) y[(at + 1) % count] = nan;
      EXPECT_EQ(max_array(y.data(), count), 10.0) << count << " " << at;
    }
  }
  EXPECT_EQ(max_array(nullptr, 0), -std::numeric_limits<double>::infinity());
  const std::vector<double> all_nan(7, nan);
  EXPECT_EQ(max_array(all_nan.data(), all_nan.size()), -std::numeric_limits<double>::infinity());
  const std::vector<double> negative = {-3.0, -1e300, -2.0, -7.0, -5.0};
  EXPECT_EQ(max_array(negative.data(), negative.size()), -2.0);
}

TEST(VectorMath, BatchedBesselTermsMatchScalarFit) {
  std::mt19937_64 engine(23);
  for (double nu : {0.5, 0.0, -0.5, -4.0, -9.0, -31.0, -127.0, -499.0}) {
    const double x_min = 1e-4, x_max = 1e5, power = 0.5 * nu;
    const LogBesselKFixedOrder fit(nu, x_min, x_max, power);
    std::uniform_real_distribution<double> log_x(std::log(x_min) - 3.0, std::log(x_max) + 3.0);
    std::vector<double> x(1001);  // not a multiple of the batch's chunk or lanes
    for (double& v : x) v = std::exp(log_x(engine));
    std::vector<double> out(x.size());
    fit.terms(x.data(), out.data(), x.size());
    for (std::size_t k = 0; k < x.size(); ++k) {
      const double log_x_k = std::log(x[k]);
      const double log_k = log_bessel_k(nu, std::sqrt(x[k]));
      const double scalar = fit.term(x[k]);
      const double exact = power * log_x_k + log_k;
      // The fit is accurate relative to log K, and the two terms may cancel in the sum.
      const double scale = std::max({1.0, std::abs(log_k), std::abs(power * log_x_k)});
      EXPECT_NEAR(out[k], exact, 2e-13 * scale) << "nu=" << nu << " x=" << x[k];
      EXPECT_NEAR(out[k], scalar, 2e-13 * scale) << "nu=" << nu << " x=" << x[k];
    }
    std::vector<double> in_place = x;
    fit.terms(in_place.data(), in_place.data(), in_place.size());
    EXPECT_EQ(in_place, out);
  }
}

// Each element is the two products rounded, then their sum, whatever the length (SIMD body and
// tail): a fused multiply-add would differ in the last bit for most of these.
TEST(VectorMath, WeightedSumRoundsEachProductThenTheSum) {
  std::mt19937_64 engine(31);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::size_t count : {0, 1, 3, 4, 7, 8, 64, 101}) {
    std::vector<double> a(count), b(count), out(count, -1.0);
    for (std::size_t i = 0; i < count; ++i) {
      a[i] = normal(engine);
      b[i] = normal(engine);
    }
    const double wa = 0.3183098861837907, wb = 1.0 - wa;
    weighted_sum(wa, a.data(), wb, b.data(), out.data(), count);
    for (std::size_t i = 0; i < count; ++i) {
      const volatile double first = wa * a[i], second = wb * b[i];  // each rounded to double
      ASSERT_EQ(out[i], first + second) << count << " " << i;
    }
  }
}

// Each lane multiplies in its factors in column order, each factor a product rounded and then a
// sum (a fused multiply-add would differ in the last bit for most of these); lanes do not mix.
TEST(VectorMath, AffineFactorProductsAreTheScalarLoop) {
  std::mt19937_64 engine(37);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (std::size_t size : {8, 16, 24, 48}) {
    for (std::size_t count : {0, 1, 8, 20}) {
      std::vector<double> a(size), b(size), c(count), product(size);
      for (std::size_t i = 0; i < size; ++i) {
        a[i] = unit(engine);
        b[i] = 1.0 - a[i] * unit(engine);
        product[i] = 0.5 + unit(engine);
      }
      for (double& value : c) value = 3.0 * unit(engine);
      std::vector<double> expected = product;
      for (std::size_t i = 0; i < size; ++i) {
        for (std::size_t k = 0; k < count; ++k) {
          const volatile double scaled = b[i] * c[k];
          const volatile double factor = a[i] + scaled;
          expected[i] = expected[i] * factor;
        }
      }
      multiply_affine_factors(product.data(), a.data(), b.data(), size, c.data(), count);
      for (std::size_t i = 0; i < size; ++i)
        ASSERT_EQ(product[i], expected[i]) << size << " " << count << " " << i;
    }
  }
}

// Every column count from 0 to 40 (whole blocks of eight and every partial one), values spread
// over many binades: each column is the scalar expression's value, bit for bit, and nothing past
// the last column is written.
TEST(VectorMath, BinaryOverlapsAreTheScalarExpression) {
  std::mt19937_64 engine(41);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (std::size_t columns = 0; columns <= 40; ++columns) {
    std::vector<double> q(2 * columns), l(2 * columns), r(2 * columns);
    for (std::size_t k = 0; k < 2 * columns; ++k) {
      q[k] = unit(engine);
      l[k] = std::exp(20.0 * (unit(engine) - 0.5));
      r[k] = std::exp(20.0 * (unit(engine) - 0.5));
    }
    std::vector<double> out(columns + 1, -1.0);
    binary_overlaps(q.data(), l.data(), r.data(), out.data(), columns);
    for (std::size_t j = 0; j < columns; ++j) {
      const volatile double even = q[2 * j] * l[2 * j] * r[2 * j];
      const volatile double odd = q[2 * j + 1] * l[2 * j + 1] * r[2 * j + 1];
      ASSERT_EQ(out[j], even + odd) << columns << " columns, column " << j;
    }
    EXPECT_EQ(out[columns], -1.0) << columns << " columns";
  }
}

// The batch is the scalar reference's arithmetic in SIMD lanes and passes over a chunk: every
// length (partial groups and chunks), every offset, arguments on both sides of the fitted
// range (and at its ends), and in place, give log_term's bits.
TEST(VectorMath, BatchedBesselTermsEqualTheScalarReferenceBitForBit) {
  std::mt19937_64 engine(29);
  for (double nu : {0.5, -9.0, -31.0, -127.0}) {
    const double x_min = 1e-3, x_max = 1e4, power = 0.5 * nu;
    const LogBesselKFixedOrder fit(nu, x_min, x_max, power);
    std::uniform_real_distribution<double> log_x(std::log(x_min) - 2.0, std::log(x_max) + 2.0);
    std::vector<double> x(203);
    for (double& v : x) v = std::exp(log_x(engine));
    x[5] = x_min;
    x[77] = x_max;
    x[130] = std::nextafter(x_max, 2.0 * x_max);
    x[150] = 8.0;  // a binade's first piece, and the last value of the piece before it
    x[151] = std::nextafter(8.0, 0.0);
    std::vector<double> reference(x.size());
    for (std::size_t k = 0; k < x.size(); ++k) reference[k] = fit.term(x[k]);
    for (std::size_t count : {1, 2, 3, 4, 5, 7, 31, 63, 64, 65, 130}) {
      for (std::size_t offset : {0, 1, 3}) {
        std::vector<double> out(count);
        fit.terms(x.data() + offset, out.data(), count);
        for (std::size_t k = 0; k < count; ++k)
          ASSERT_EQ(out[k], reference[offset + k])
              << "nu=" << nu << " count=" << count << " offset=" << offset << " k=" << k;
      }
    }
    std::vector<double> in_place = x;
    fit.terms(in_place.data(), in_place.data(), in_place.size());
    EXPECT_EQ(in_place, reference);
  }
}

}  // namespace
}  // namespace kingman::kernels
