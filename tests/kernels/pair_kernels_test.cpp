// The pair kernels (pair_kernels.hpp) against their scalar references, d from 1 to 300.
//
// Error bounds (u = 2^-53): squared distances and dot products are sums of d terms that both
// versions round identically term by term; only the order of the additions differs, and any
// order of d - 1 additions of nonnegative terms is within (d - 1) u (1 + O(u)) of the exact sum
// S, so the two differ by at most 2 d u S. For signed terms (dot) the same holds with S the sum
// of the terms' magnitudes. The blocked product form is within (2d + 6) u / tau of the exact
// distance (its header derives this), hence within that plus d u of the reference.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kingman/kernels/pair_kernels.hpp"

namespace kingman::kernels {
namespace {

constexpr double kUlp = 0x1p-53;

std::vector<double> normal_points(std::size_t n, std::size_t d, double centre, unsigned seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> x(n * d);
  for (double& v : x) v = centre + normal(engine);
  return x;
}

TEST(PairKernels, SquaredDistanceMatchesReferenceForEveryDimension) {
  for (std::size_t d = 1; d <= 300; ++d) {
    const std::vector<double> x = normal_points(6, d, 0.0, static_cast<unsigned>(d));
    for (std::size_t i = 0; i < 6; ++i) {
      for (std::size_t j = 0; j < 6; ++j) {
        const double* a = x.data() + i * d;
        const double* b = x.data() + j * d;
        const double reference = squared_distance_reference(a, b, d);
        const double fast = squared_distance(a, b, d);
        EXPECT_LE(std::abs(fast - reference), 2.0 * static_cast<double>(d) * kUlp * reference)
            << "d=" << d << " pair " << i << "," << j;
        // Symmetric to the bit: (a - b)^2 and (b - a)^2 round alike.
        EXPECT_EQ(fast, squared_distance(b, a, d));
      }
    }
  }
}

TEST(PairKernels, RowKernelsEqualThePairKernelBitForBit) {
  for (std::size_t d : {1u, 2u, 3u, 7u, 8u, 9u, 15u, 20u, 64u, 100u, 256u, 300u}) {
    const std::size_t n = 37;
    const std::vector<double> x = normal_points(n, d, 3.0, 11);
    std::vector<const double*> rows(n);
    for (std::size_t k = 0; k < n; ++k) rows[k] = x.data() + ((k * 7) % n) * d;
    std::vector<double> from_rows(n), from_block(n);
    squared_distances_to_rows(x.data(), rows.data(), n, d, from_rows.data());
    squared_distances_to_block(x.data(), x.data(), n, d, d, from_block.data());
    for (std::size_t k = 0; k < n; ++k) {
      EXPECT_EQ(from_rows[k], squared_distance(x.data(), rows[k], d)) << "d=" << d;
      EXPECT_EQ(from_block[k], squared_distance(x.data(), x.data() + k * d, d)) << "d=" << d;
    }
  }
}

// The in-order sums are the reference's, bit for bit, for whole blocks of eight rows and every
// tail, rows anywhere in memory, and either way round (the engine passes the new cluster as x).
TEST(PairKernels, InOrderRowSumsEqualTheReferenceBitForBit) {
  for (std::size_t d : {1u, 2u, 3u, 8u, 20u, 64u, 257u}) {
    for (std::size_t count : {0u, 1u, 7u, 8u, 9u, 16u, 37u}) {
      const std::vector<double> x = normal_points(count + 1, d, 3.0, static_cast<unsigned>(d));
      std::vector<const double*> rows(count);
      for (std::size_t k = 0; k < count; ++k) rows[k] = x.data() + (1 + (k * 5) % count) * d;
      std::vector<double> out(count);
      squared_distances_in_order(x.data(), rows.data(), count, d, out.data());
      for (std::size_t k = 0; k < count; ++k) {
        EXPECT_EQ(std::bit_cast<std::uint64_t>(out[k]),
                  std::bit_cast<std::uint64_t>(squared_distance_reference(x.data(), rows[k], d)))
            << "d=" << d << ", row " << k << " of " << count;
        EXPECT_EQ(out[k], squared_distance_reference(rows[k], x.data(), d));
      }
    }
  }
}

// Rows rescored together give each row's in-order sums bit for bit, whatever their first
// partners: rows starting in the same block, in different blocks, at a block's edge, one with
// no partner left, and more rows than four side by side. Firsts that decrease or pass the
// count are refused.
TEST(PairKernels, SharedRowsEqualTheirInOrderSumsBitForBit) {
  for (std::size_t d : {1u, 3u, 8u, 20u, 64u, 67u}) {
    for (std::size_t count : {0u, 1u, 8u, 9u, 30u, 67u}) {
      const std::vector<double> x =
          normal_points(count + 12, d, 2.0, static_cast<unsigned>(d + count));
      std::vector<const double*> partners(count);
      for (std::size_t k = 0; k < count; ++k) partners[k] = x.data() + (12 + (k * 7) % count) * d;
      std::vector<std::size_t> first;
      for (std::size_t q = 0; q < 11; ++q)
        first.push_back(std::min(count, (q * q * 3) / 2 + q % 2));
      std::vector<const double*> queries(first.size());
      std::vector<std::vector<double>> rows(first.size());
      std::vector<double*> out(first.size());
      for (std::size_t q = 0; q < first.size(); ++q) {
        queries[q] = x.data() + q * d;
        rows[q].assign(count - first[q] + 1, -1.0);  // one past the row: must stay untouched
        out[q] = rows[q].data();
      }
      squared_distances_in_order_shared(queries.data(), first.data(), first.size(), partners.data(),
                                        count, d, out.data());
      for (std::size_t q = 0; q < first.size(); ++q) {
        std::vector<double> alone(count - first[q]);
        squared_distances_in_order(queries[q], partners.data() + first[q], count - first[q], d,
                                   alone.data());
        for (std::size_t k = 0; k < alone.size(); ++k)
          ASSERT_EQ(std::bit_cast<std::uint64_t>(rows[q][k]),
                    std::bit_cast<std::uint64_t>(alone[k]))
              << "d=" << d << ", count " << count << ", row " << q << ", partner " << k;
        EXPECT_EQ(rows[q].back(), -1.0) << "written past row " << q;
      }
    }
  }
  const std::vector<double> x = normal_points(4, 2, 0.0, 1);
  const double* partners[2] = {x.data(), x.data() + 2};
  const double* queries[2] = {x.data() + 4, x.data() + 6};
  double a[2], b[2];
  double* out[2] = {a, b};
  const std::size_t decreasing[2] = {1, 0}, beyond[2] = {0, 3};
  EXPECT_THROW(squared_distances_in_order_shared(queries, decreasing, 2, partners, 2, 2, out),
               std::invalid_argument);
  EXPECT_THROW(squared_distances_in_order_shared(queries, beyond, 2, partners, 2, 2, out),
               std::invalid_argument);
}

TEST(PairKernels, DotProductsMatchReference) {
  for (std::size_t count = 0; count <= 300; ++count) {
    const std::vector<double> a = normal_points(1, count, 0.0, 3);
    const std::vector<double> b = normal_points(1, count, 0.5, 4);
    double reference = 0.0, magnitude = 0.0;
    for (std::size_t k = 0; k < count; ++k) {
      reference += a[k] * b[k];
      magnitude += std::abs(a[k] * b[k]);
    }
    const double fast = dot(a.data(), b.data(), count);
    EXPECT_LE(std::abs(fast - reference), 2.0 * static_cast<double>(count) * kUlp * magnitude);
    const double* row = a.data();
    double batched = 0.0;
    dots_with(&row, &count, 1, b.data(), &batched);
    EXPECT_EQ(batched, fast);
  }
}

// The order of the additions that squared_distance, dot and the row kernels promise (and that
// keeps results the same across releases and SIMD widths): eight partial sums, lane l taking the
// terms k = l (mod 8) of the whole blocks of eight, then a tail of four terms into lanes 0-3, two
// into lanes 4-5 and one into lane 6, joined as ((0 + 4) + (1 + 5)) + ((2 + 6) + (3 + 7)).
double eight_lane_sum(const std::vector<double>& terms) {
  double lane[8] = {};
  const std::size_t count = terms.size();
  std::size_t k = 0;
  for (; k + 8 <= count; k += 8)
    for (std::size_t l = 0; l < 8; ++l) lane[l] += terms[k + l];
  if (k + 4 <= count) {
    for (std::size_t l = 0; l < 4; ++l) lane[l] += terms[k + l];
    k += 4;
  }
  if (k + 2 <= count) {
    lane[4] += terms[k];
    lane[5] += terms[k + 1];
    k += 2;
  }
  if (k < count) lane[6] += terms[k];
  return ((lane[0] + lane[4]) + (lane[1] + lane[5])) + ((lane[2] + lane[6]) + (lane[3] + lane[7]));
}

TEST(PairKernels, SumsFollowTheEightLaneOrderBitForBit) {
  for (std::size_t count = 0; count <= 70; ++count) {
    // Terms of mixed signs and magnitudes, so that a different order would round differently.
    const std::vector<double> a = normal_points(1, count, 0.0, static_cast<unsigned>(count) + 7);
    std::vector<double> b = normal_points(1, count, 0.0, static_cast<unsigned>(count) + 8);
    for (std::size_t k = 0; k < count; k += 3) b[k] *= 1e8;
    std::vector<double> products(count), squares(count);
    for (std::size_t k = 0; k < count; ++k) {
      products[k] = a[k] * b[k];
      squares[k] = (a[k] - b[k]) * (a[k] - b[k]);
    }
    EXPECT_EQ(dot(a.data(), b.data(), count), eight_lane_sum(products)) << "count=" << count;
    EXPECT_EQ(squared_distance(a.data(), b.data(), count), eight_lane_sum(squares))
        << "count=" << count;
  }
}

// dots_with sums rows side by side, up to the blocks they all have, then each row on its own:
// every row of every length (in groups of mixed lengths, and the rows left over) must equal dot.
TEST(PairKernels, DotsWithEqualsDotForRowsOfMixedLengths) {
  const std::size_t longest = 150;
  const std::vector<double> weights = normal_points(1, longest, 0.3, 21);
  const std::vector<double> data = normal_points(40, longest, -0.2, 22);
  for (std::size_t shift = 0; shift < 9; ++shift) {
    std::vector<const double*> rows;
    std::vector<std::size_t> lengths;
    for (std::size_t r = 0; r < 40; ++r) {
      rows.push_back(data.data() + r * longest);
      lengths.push_back((r * 37 + shift * 11) % (longest + 1));  // 0 ... 150, unordered
    }
    for (std::size_t count : {1u, 3u, 4u, 5u, 8u, 39u, 40u}) {
      std::vector<double> out(count);
      dots_with(rows.data(), lengths.data(), count, weights.data(), out.data());
      for (std::size_t r = 0; r < count; ++r)
        EXPECT_EQ(out[r], dot(rows[r], weights.data(), lengths[r]))
            << "row " << r << " of " << count << ", length " << lengths[r];
    }
  }
}

// Points far from the origin (so that the product form cancels) with near-duplicates among them
// (so that some pairs must be recomputed), across tile boundaries (n > 2 tiles).
TEST(PairKernels, BlockedTilesMatchReferenceAndRecomputeCancellingPairs) {
  const std::size_t n = 2 * PairDistanceTiles::kTile + 45;
  for (std::size_t d : {1u, 2u, 5u, 20u, 64u, 300u}) {
    std::vector<double> x = normal_points(n, d, 100.0, static_cast<unsigned>(d) + 50);
    std::mt19937_64 engine(d);
    std::normal_distribution<double> tiny(0.0, 1e-7);
    for (std::size_t i = 1; i < n; i += 9)  // every ninth point nearly repeats its predecessor
      for (std::size_t k = 0; k < d; ++k) x[i * d + k] = x[(i - 1) * d + k] + tiny(engine);
    const double tau = PairDistanceTiles::kDefaultRecomputeFraction;
    const double bound =
        (2.0 * static_cast<double>(d) + 6.0) * kUlp / tau + 2.0 * static_cast<double>(d) * kUlp;
    const PairDistanceTiles tiles(x.data(), n, d);
    const std::size_t tile = PairDistanceTiles::kTile;
    std::vector<double> fast(tile * tile), reference(tile * tile);
    std::size_t recomputed = 0;
    double worst = 0.0;
    for (std::size_t a = 0; a < tiles.tile_count(); ++a) {
      for (std::size_t b = a; b < tiles.tile_count(); ++b) {
        recomputed += tiles.compute(a, b, fast.data());
        pair_distance_tile_reference(x.data(), n, d, a, b, reference.data());
        for (std::size_t i = tiles.tile_begin(a); i < tiles.tile_end(a); ++i) {
          for (std::size_t j = std::max(tiles.tile_begin(b), a == b ? i + 1 : 0);
               j < tiles.tile_end(b); ++j) {
            const std::size_t at = (i - tiles.tile_begin(a)) * tile + (j - tiles.tile_begin(b));
            const double error = std::abs(fast[at] - reference[at]) / reference[at];
            worst = std::max(worst, error);
            EXPECT_LE(error, bound) << "d=" << d << " pair " << i << "," << j;
          }
        }
      }
    }
    // The near-duplicates (distance ~1e-14 d against norms ~1e4 d) cancel completely in
    // product form: every one of them must have been recomputed.
    EXPECT_GE(recomputed, n / 9) << "d=" << d;
    std::printf(
        "blocked pair distances, d = %zu: %zu pairs recomputed, worst relative error %.3g "
        "(bound %.3g)\n",
        d, recomputed, worst, bound);
  }
}

TEST(PairKernels, RejectsBadRecomputeFraction) {
  const std::vector<double> x(4, 0.0);
  EXPECT_THROW(PairDistanceTiles(x.data(), 2, 2, -0.1), std::domain_error);
  EXPECT_THROW(PairDistanceTiles(x.data(), 2, 2, 1.5), std::domain_error);
}

}  // namespace
}  // namespace kingman::kernels
