#pragma once
// The three copies of an array kernel (simd_level.hpp) and the call that picks one.
//
// A kernel is a struct with a static member template run<W>(args...), forced inline, that does
// the work with native vectors of W doubles (simd_lanes.hpp): W = 8 in the AVX-512 copy, 4 in
// the AVX2 copy, 2 in the baseline. run_in_copy<Kernel>(args...) calls the copy for the active
// level. Each copy is a function compiled for its target, and run<W> is inlined into it, so
// everything the kernel does (its lambdas and helpers, all forced inline too, and the loops that
// GCC vectorizes) is compiled for that target.
//
// Why not GCC's target_clones: a clone keeps the source's vector types, and a vector of eight
// doubles has no register on AVX2 or SSE2. GCC then kept the partial sums in memory and moved
// them through general registers: the AVX2 copy of the squared distances ran slower than the
// baseline one (bench/RESULTS.md). Here each copy's types fit its registers. The level is read
// from an atomic (a plain load on x86) and the branch to the copy is always the same one.
#include <atomic>
#include <cstddef>

#include "kingman/kernels/simd_level.hpp"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define KINGMAN_SIMD_COPIES 1
#define KINGMAN_TARGET_AVX512 __attribute__((target("avx512f")))
#define KINGMAN_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define KINGMAN_SIMD_COPIES 0
#define KINGMAN_TARGET_AVX512
#define KINGMAN_TARGET_AVX2
#endif

namespace kingman::kernels::detail {

// The active level as an int (simd_level.cpp): kUnresolved until the first kernel call or
// set_simd_level, then a SimdLevel. Constant-initialized, so no static initializer, here or in a
// program, can see it before it holds a valid value.
inline constexpr int kUnresolved = -1;
extern std::atomic<int> active_simd_level;

// Sets the active level to the widest if nothing chose one yet, and returns it.
int resolve_simd_level();

#if KINGMAN_SIMD_COPIES
// Arguments pass by value (pointers and numbers): a reference to a double would let every store
// through a double pointer in the kernel change it, as far as the compiler can tell.
template <typename Kernel, typename... Args>
[[gnu::noinline]] KINGMAN_TARGET_AVX512 auto run_avx512(Args... args) {
  return Kernel::template run<8>(args...);
}
template <typename Kernel, typename... Args>
[[gnu::noinline]] KINGMAN_TARGET_AVX2 auto run_avx2(Args... args) {
  return Kernel::template run<4>(args...);
}
#endif
template <typename Kernel, typename... Args>
[[gnu::noinline]] auto run_baseline(Args... args) {
  return Kernel::template run<2>(args...);
}

template <typename Kernel, typename... Args>
[[gnu::always_inline]] inline auto run_in_copy(Args... args) {
#if KINGMAN_SIMD_COPIES
  int level = active_simd_level.load(std::memory_order_relaxed);
  if (level == kUnresolved) [[unlikely]]
    level = resolve_simd_level();
  if (level == static_cast<int>(SimdLevel::avx512)) return run_avx512<Kernel>(args...);
  if (level == static_cast<int>(SimdLevel::avx2)) return run_avx2<Kernel>(args...);
#endif
  return run_baseline<Kernel>(args...);
}

}  // namespace kingman::kernels::detail
