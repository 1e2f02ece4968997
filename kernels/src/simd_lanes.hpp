#pragma once
// Lanes<N, W>: N doubles (N = 8 or 4) held as native vectors of W doubles each (W = 8, 4 or 2;
// simd_copies.hpp), with element-wise IEEE arithmetic. Lane l is element l whatever W is, and
// every operation is each lane's scalar operation, so a kernel written with Lanes performs the
// same roundings in every copy and gives the same bits; only the registers differ (one zmm, two
// ymm or four xmm for eight lanes).
//
// Everything is forced inline: the copies' functions (simd_copies.hpp) are compiled for their
// targets and take this code in. Lanes pass by const reference into helpers and come back by
// value (a by-value vector argument changes the ABI between targets, and GCC notes it).
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kingman::kernels::simd {

template <std::size_t W>
struct NativeVector;
template <>
struct NativeVector<8> {
  using Doubles = double __attribute__((vector_size(8 * sizeof(double))));
  using Mask = std::int64_t __attribute__((vector_size(8 * sizeof(std::int64_t))));
};
template <>
struct NativeVector<4> {
  using Doubles = double __attribute__((vector_size(4 * sizeof(double))));
  using Mask = std::int64_t __attribute__((vector_size(4 * sizeof(std::int64_t))));
};
template <>
struct NativeVector<2> {
  using Doubles = double __attribute__((vector_size(2 * sizeof(double))));
  using Mask = std::int64_t __attribute__((vector_size(2 * sizeof(std::int64_t))));
};

// The result of comparing two Lanes: all ones in a lane where the comparison holds.
template <std::size_t N, std::size_t W>
struct LaneMask {
  static constexpr std::size_t kWidth = W < N ? W : N;
  static constexpr std::size_t kParts = N / kWidth;
  typename NativeVector<kWidth>::Mask part[kParts];
};

template <std::size_t N, std::size_t W>
struct Lanes {
  static constexpr std::size_t kWidth = W < N ? W : N;  // doubles per native vector
  static constexpr std::size_t kParts = N / kWidth;
  using Part = typename NativeVector<kWidth>::Doubles;
  using Mask = LaneMask<N, W>;
  Part part[kParts];

  [[gnu::always_inline]] static Lanes zero() { return Lanes{}; }
  [[gnu::always_inline]] static Lanes splat(double value) {
    Lanes out;
    for (std::size_t i = 0; i < kParts; ++i) out.part[i] = Part{} + value;
    return out;
  }
  [[gnu::always_inline]] static Lanes load(const double* from) {
    Lanes out;
    for (std::size_t i = 0; i < kParts; ++i)
      std::memcpy(&out.part[i], from + i * kWidth, sizeof(Part));
    return out;
  }
  [[gnu::always_inline]] void store(double* to) const {
    for (std::size_t i = 0; i < kParts; ++i) std::memcpy(to + i * kWidth, &part[i], sizeof(Part));
  }

  [[gnu::always_inline]] double operator[](std::size_t lane) const {
    const Part& p = part[lane / kWidth];
    return p[lane % kWidth];
  }
  [[gnu::always_inline]] void add_to_lane(std::size_t lane, double value) {
    Part& p = part[lane / kWidth];
    p[lane % kWidth] += value;
  }

#define KINGMAN_LANES_OPERATOR(op)                                                    \
  [[gnu::always_inline]] Lanes operator op(const Lanes& other) const {                \
    Lanes out;                                                                        \
    for (std::size_t i = 0; i < kParts; ++i) out.part[i] = part[i] op other.part[i];  \
    return out;                                                                       \
  }                                                                                   \
  [[gnu::always_inline]] Lanes operator op(double value) const {                      \
    Lanes out;                                                                        \
    for (std::size_t i = 0; i < kParts; ++i) out.part[i] = part[i] op value;          \
    return out;                                                                       \
  }                                                                                   \
  [[gnu::always_inline]] friend Lanes operator op(double value, const Lanes& lanes) { \
    Lanes out;                                                                        \
    for (std::size_t i = 0; i < kParts; ++i) out.part[i] = value op lanes.part[i];    \
    return out;                                                                       \
  }                                                                                   \
  [[gnu::always_inline]] Lanes& operator op##=(const Lanes& other) {                  \
    for (std::size_t i = 0; i < kParts; ++i) part[i] = part[i] op other.part[i];      \
    return *this;                                                                     \
  }
  KINGMAN_LANES_OPERATOR(+)
  KINGMAN_LANES_OPERATOR(-)
  KINGMAN_LANES_OPERATOR(*)
  KINGMAN_LANES_OPERATOR(/)
#undef KINGMAN_LANES_OPERATOR

  [[gnu::always_inline]] Lanes operator-() const {
    Lanes out;
    for (std::size_t i = 0; i < kParts; ++i) out.part[i] = -part[i];
    return out;
  }
  [[gnu::always_inline]] Mask operator<(const Lanes& other) const {
    Mask out;
    for (std::size_t i = 0; i < kParts; ++i) out.part[i] = part[i] < other.part[i];
    return out;
  }
  [[gnu::always_inline]] Mask operator>(const Lanes& other) const {
    Mask out;
    for (std::size_t i = 0; i < kParts; ++i) out.part[i] = part[i] > other.part[i];
    return out;
  }
};

// where ? if_true : if_false, lane by lane.
template <std::size_t N, std::size_t W>
[[gnu::always_inline]] inline Lanes<N, W> select(const LaneMask<N, W>& where,
                                                 const Lanes<N, W>& if_true,
                                                 const Lanes<N, W>& if_false) {
  Lanes<N, W> out;
  for (std::size_t i = 0; i < Lanes<N, W>::kParts; ++i)
    out.part[i] = where.part[i] ? if_true.part[i] : if_false.part[i];
  return out;
}

// Lanes 0-3 and 4-7 of eight.
template <std::size_t W>
[[gnu::always_inline]] inline Lanes<4, W> low_half(const Lanes<8, W>& lanes) {
  Lanes<4, W> out;
  if constexpr (W == 8) {
    out.part[0] = __builtin_shufflevector(lanes.part[0], lanes.part[0], 0, 1, 2, 3);
  } else {
    for (std::size_t i = 0; i < Lanes<4, W>::kParts; ++i) out.part[i] = lanes.part[i];
  }
  return out;
}
template <std::size_t W>
[[gnu::always_inline]] inline Lanes<4, W> high_half(const Lanes<8, W>& lanes) {
  Lanes<4, W> out;
  if constexpr (W == 8) {
    out.part[0] = __builtin_shufflevector(lanes.part[0], lanes.part[0], 4, 5, 6, 7);
  } else {
    for (std::size_t i = 0; i < Lanes<4, W>::kParts; ++i)
      out.part[i] = lanes.part[i + Lanes<4, W>::kParts];
  }
  return out;
}

// Four doubles a, b, c, d as lanes 0-3.
template <std::size_t W>
[[gnu::always_inline]] inline Lanes<4, W> four(double a, double b, double c, double d) {
  const double values[4] = {a, b, c, d};
  return Lanes<4, W>::load(values);
}

// For four rows' lane pairs p_j (four lanes each): lane j of the result is
// (p_j[0] + p_j[1]) + (p_j[2] + p_j[3]), every row's sum in that order. Four-lane vectors are
// transposed so that the two levels run once for all rows; pairs of two-lane vectors two rows at
// a time.
template <std::size_t W>
[[gnu::always_inline]] inline Lanes<4, W> join_four(const Lanes<4, W> (&pairs)[4]) {
  Lanes<4, W> out;
  if constexpr (Lanes<4, W>::kWidth == 4) {
    const auto& p0 = pairs[0].part[0];
    const auto& p1 = pairs[1].part[0];
    const auto& p2 = pairs[2].part[0];
    const auto& p3 = pairs[3].part[0];
    // column[c] holds lane c of each row's pairs.
    const auto even01 = __builtin_shufflevector(p0, p1, 0, 4, 2, 6);
    const auto odd01 = __builtin_shufflevector(p0, p1, 1, 5, 3, 7);
    const auto even23 = __builtin_shufflevector(p2, p3, 0, 4, 2, 6);
    const auto odd23 = __builtin_shufflevector(p2, p3, 1, 5, 3, 7);
    const auto column0 = __builtin_shufflevector(even01, even23, 0, 1, 4, 5);
    const auto column1 = __builtin_shufflevector(odd01, odd23, 0, 1, 4, 5);
    const auto column2 = __builtin_shufflevector(even01, even23, 2, 3, 6, 7);
    const auto column3 = __builtin_shufflevector(odd01, odd23, 2, 3, 6, 7);
    out.part[0] = (column0 + column1) + (column2 + column3);
  } else {
    static_assert(Lanes<4, W>::kWidth == 2);
    // Rows j and j + 1: part 0 holds lanes 0 and 1, part 1 lanes 2 and 3.
    for (std::size_t j = 0; j < 4; j += 2) {
      const auto& a = pairs[j].part;
      const auto& b = pairs[j + 1].part;
      const auto lane0 = __builtin_shufflevector(a[0], b[0], 0, 2);
      const auto lane1 = __builtin_shufflevector(a[0], b[0], 1, 3);
      const auto lane2 = __builtin_shufflevector(a[1], b[1], 0, 2);
      const auto lane3 = __builtin_shufflevector(a[1], b[1], 1, 3);
      out.part[j / 2] = (lane0 + lane1) + (lane2 + lane3);
    }
  }
  return out;
}

// Sixteen lanes, `low` (0-7) then `high` (8-15), summed in neighbouring pairs: lane j of the
// result is lane 2j + lane 2j + 1. Each native vector of the result comes from two neighbouring
// ones of the sixteen lanes, split into their even and odd lanes.
template <std::size_t W>
[[gnu::always_inline]] inline Lanes<8, W> pair_sums(const Lanes<8, W>& low,
                                                    const Lanes<8, W>& high) {
  using Eight = Lanes<8, W>;
  constexpr std::size_t kParts = Eight::kParts;
  Eight out;
  for (std::size_t k = 0; k < kParts; ++k) {
    const std::size_t first = 2 * k, second = 2 * k + 1;
    const auto& a = first < kParts ? low.part[first] : high.part[first - kParts];
    const auto& b = second < kParts ? low.part[second] : high.part[second - kParts];
    if constexpr (Eight::kWidth == 8) {
      out.part[k] = __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14) +
                    __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15);
    } else if constexpr (Eight::kWidth == 4) {
      out.part[k] =
          __builtin_shufflevector(a, b, 0, 2, 4, 6) + __builtin_shufflevector(a, b, 1, 3, 5, 7);
    } else {
      static_assert(Eight::kWidth == 2);
      out.part[k] = __builtin_shufflevector(a, b, 0, 2) + __builtin_shufflevector(a, b, 1, 3);
    }
  }
  return out;
}

}  // namespace kingman::kernels::simd
