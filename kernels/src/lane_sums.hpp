#pragma once
// Sums in eight interleaved partial sums, shared by the array kernels whose copies
// (simd_copies.hpp) must give the same bits. A Block<W> holds eight doubles, lane l accumulating
// the terms k = l mod 8, as native vectors of W doubles (simd_lanes.hpp): each lane's partial sum
// is the same chain of scalar additions in every copy, and the lanes are joined in one fixed
// order. The helpers and the lambdas that give the terms are forced inline, so that each copy
// compiles them for its own target.
#include <cstddef>

#include "simd_lanes.hpp"

namespace kingman::kernels {
namespace {

constexpr std::size_t kLanes = 8;

template <std::size_t W>
using Block = simd::Lanes<8, W>;
template <std::size_t W>
using HalfBlock = simd::Lanes<4, W>;

// Ends a sum whose whole blocks are in `lanes` (lane l holds the terms k = l mod 8 so far), from
// term k on (fewer than eight left): a tail of four terms into lanes 0-3, of two into lanes 4
// and 5, of one into lane 6; then the lanes joined as ((0 + 4) + (1 + 5)) + ((2 + 6) + (3 + 7)).
template <std::size_t W, typename Term>
[[gnu::always_inline]] inline double finish_sum(const Block<W>& lanes, std::size_t k,
                                                std::size_t count, const Term& term) {
  HalfBlock<W> low = simd::low_half(lanes);
  HalfBlock<W> high = simd::high_half(lanes);
  if (k + 4 <= count) {
    low += simd::four<W>(term(k), term(k + 1), term(k + 2), term(k + 3));
    k += 4;
  }
  if (k + 2 <= count) {
    high.add_to_lane(0, term(k));
    high.add_to_lane(1, term(k + 1));
    k += 2;
  }
  if (k < count) high.add_to_lane(2, term(k));
  const HalfBlock<W> pairs = low + high;
  return (pairs[0] + pairs[1]) + (pairs[2] + pairs[3]);
}

// sum_k term(k) for k < count in eight interleaved partial sums: whole blocks of eight
// (block(k) gives terms k ... k + 7), then finish_sum.
template <std::size_t W, typename BlockTerm, typename Term>
[[gnu::always_inline]] inline double interleaved_sum(std::size_t count, const BlockTerm& block,
                                                     const Term& term) {
  Block<W> lanes = Block<W>::zero();
  const std::size_t blocks_end = count / kLanes * kLanes;
  for (std::size_t k = 0; k < blocks_end; k += kLanes) lanes += block(k);
  return finish_sum<W>(lanes, blocks_end, count, term);
}

}  // namespace
}  // namespace kingman::kernels
