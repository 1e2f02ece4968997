// Rate1PairScore (rate1_pair_score.hpp): a row of heights equals the pairs scored one by one,
// bit for bit, and both equal linear_mode_duration(1, d, eps, r) with eps the SIMD distance, on
// leaves and on merged clusters (whose offsets differ), so the full and bounded Greedy-Rate1
// paths and any split of a row give the same heights.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include "../../engine/src/inference/rate1_pair_score.hpp"
#include "kingman/inference/merge_duration.hpp"
#include "kingman/kernels/pair_kernels.hpp"

namespace kingman {
namespace {

// n x d standard normal points, identity whitening.
WhitenedData normal_points(std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal;
  WhitenedData data;
  data.n = n;
  data.d = d;
  data.x.resize(n * d);
  for (double& v : data.x) v = normal(engine);
  data.log_lambda_diagonal.assign(d, 0.0);
  return data;
}

TEST(Rate1PairScore, RowsEqualThePairsScoredOneByOne) {
  for (const std::size_t d : {1u, 7u, 20u, 33u}) {
    const WhitenedData data = normal_points(23, d, d);
    BrownianMessages messages(data, 0.1);
    // A few merges, so that offsets differ from slot to slot.
    messages.merge(0, 5, -0.3, 5);
    messages.merge(2, 7, -0.4, 7);
    messages.merge(5, 7, -0.9, 7);
    const detail::Rate1PairScore score(data, messages);
    const std::vector<std::size_t> live = {1,  3,  4,  6,  7,  8,  9,  10, 11, 12,
                                           13, 14, 15, 16, 17, 18, 19, 20, 21, 22};
    for (const std::size_t i : live) {
      std::vector<std::size_t> partners;
      for (const std::size_t j : live)
        if (j != i) partners.push_back(j);
      std::vector<double> row(partners.size());
      score.row(i, partners.data(), partners.size(), row.data());
      for (std::size_t k = 0; k < partners.size(); ++k) {
        const std::size_t j = partners[k];
        const double one = i < j ? score(i, j) : score(j, i);
        const double eps = kernels::squared_distance(messages.mean(i), messages.mean(j), d);
        const double expected = linear_mode_duration(1.0, static_cast<double>(d), eps,
                                                     messages.offset(i) + messages.offset(j));
        EXPECT_EQ(std::bit_cast<std::uint64_t>(row[k]), std::bit_cast<std::uint64_t>(one))
            << "d = " << d << ", pair " << i << ", " << j;
        EXPECT_EQ(std::bit_cast<std::uint64_t>(row[k]), std::bit_cast<std::uint64_t>(expected))
            << "d = " << d << ", pair " << i << ", " << j;
      }
    }
  }
}

// rows() scores several slots at once over chunks of partners (about 24 KiB of means each: 4
// partners at d = 800, 152 at d = 20): every height equals row()'s bit for bit, with a slot
// among its own partners too (the bounded path's initial rows), partner counts that are not a
// multiple of the chunk or of the kernel's four rows, and one slot alone.
TEST(Rate1PairScore, SeveralRowsAtOnceEqualRowByRow) {
  for (const std::size_t d : {3u, 20u, 101u, 800u}) {
    const std::size_t n = 331;
    const WhitenedData data = normal_points(n, d, d + 1000);
    BrownianMessages messages(data, 0.05);
    messages.merge(3, 9, -0.2, 9);
    messages.merge(9, 40, -0.7, 40);
    const detail::Rate1PairScore score(data, messages);
    std::vector<std::size_t> partners;
    for (std::size_t j = 0; j < n; ++j)
      if (j != 3 && j != 9) partners.push_back(j);
    for (const std::size_t slot_count : {1u, 5u, 8u}) {
      std::vector<std::size_t> slots;
      for (std::size_t q = 0; q < slot_count; ++q) slots.push_back(partners[7 + 31 * q]);
      for (const std::size_t count : {partners.size(), std::size_t{6}, std::size_t{157}}) {
        std::vector<std::vector<double>> together(slot_count, std::vector<double>(count));
        std::vector<double*> out;
        for (auto& row : together) out.push_back(row.data());
        score.rows(slots.data(), slot_count, partners.data(), count, out.data());
        std::vector<double> alone(count);
        for (std::size_t q = 0; q < slot_count; ++q) {
          score.row(slots[q], partners.data(), count, alone.data());
          for (std::size_t k = 0; k < count; ++k) {
            ASSERT_EQ(std::bit_cast<std::uint64_t>(together[q][k]),
                      std::bit_cast<std::uint64_t>(alone[k]))
                << "d = " << d << ", slot " << slots[q] << ", partner " << partners[k] << " of "
                << count;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace kingman
