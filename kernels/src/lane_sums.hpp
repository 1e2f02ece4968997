#pragma once
// Sums in eight interleaved partial sums with GCC's and Clang's vector extension, shared by the
// array kernels whose SIMD copies (vector_clones.hpp) must give the same bits.
#include <cstddef>

namespace kingman::kernels {
namespace {

constexpr std::size_t kLanes = 8;

// The sums below are written with GCC's and Clang's vector extension: a Block holds eight
// doubles, one per lane, and its arithmetic is the element-wise IEEE arithmetic. So each lane's
// partial sum is the same chain of scalar additions in every SIMD copy of a kernel
// (vector_clones.hpp), and the copies give the same bits: a zmm register in the AVX-512 copy,
// two ymm registers in the AVX2 one, four xmm in the baseline. (Written as scalar lanes, GCC's
// vectorizer turned four rows summed side by side into permutations of loads.) The helpers are
// forced inline so that each copy gets its own code rather than calling a baseline one.
//
// The lambdas that give the terms are forced inline too, and Blocks never travel by value
// through a call: helpers and lambdas take and fill them by reference. A lambda is a function of
// its own, which the SIMD copies do not clone; left out of line (as the AddressSanitizer build
// left them), a baseline lambda returning a Block to an AVX-512 caller passed it by another
// convention, and the kernel read through a wrong pointer. (GCC warns of such calls with
// -Wpsabi; none are left.) Out of line, the lambdas also cost the kernels 10 %.
using Block = double __attribute__((vector_size(kLanes * sizeof(double))));
using HalfBlock = double __attribute__((vector_size(kLanes / 2 * sizeof(double))));

// Ends a sum whose whole blocks are in `lanes` (lane l holds the terms k = l mod 8 so far), from
// term k on (fewer than eight left): a tail of four terms into lanes 0-3, of two into lanes 4
// and 5, of one into lane 6; then the lanes joined as ((0 + 4) + (1 + 5)) + ((2 + 6) + (3 + 7)).
template <typename Term>
[[gnu::always_inline]] inline double finish_sum(const Block& lanes, std::size_t k,
                                                std::size_t count, const Term& term) {
  HalfBlock low = __builtin_shufflevector(lanes, lanes, 0, 1, 2, 3);
  HalfBlock high = __builtin_shufflevector(lanes, lanes, 4, 5, 6, 7);
  if (k + 4 <= count) {
    low += HalfBlock{term(k), term(k + 1), term(k + 2), term(k + 3)};
    k += 4;
  }
  if (k + 2 <= count) {
    high[0] += term(k);
    high[1] += term(k + 1);
    k += 2;
  }
  if (k < count) high[2] += term(k);
  const HalfBlock pairs = low + high;
  return (pairs[0] + pairs[1]) + (pairs[2] + pairs[3]);
}

// sum_k term(k) for k < count in eight interleaved partial sums: whole blocks of eight
// (block(k, terms) fills terms with terms k ... k + 7), then finish_sum.
template <typename BlockTerm, typename Term>
[[gnu::always_inline]] inline double interleaved_sum(std::size_t count, const BlockTerm& block,
                                                     const Term& term) {
  Block lanes = {}, terms;
  const std::size_t blocks_end = count / kLanes * kLanes;
  for (std::size_t k = 0; k < blocks_end; k += kLanes) {
    block(k, terms);
    lanes += terms;
  }
  return finish_sum(lanes, blocks_end, count, term);
}

}  // namespace
}  // namespace kingman::kernels
