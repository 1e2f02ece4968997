#include "kingman/kernels/simd_level.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "simd_copies.hpp"

// glibc 2.33 and later publish the CPU features its loader found (sys/platform/x86.h).
#if defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#define KINGMAN_GLIBC_CPU_FEATURES 1
#endif
#endif
#ifndef KINGMAN_GLIBC_CPU_FEATURES
#define KINGMAN_GLIBC_CPU_FEATURES 0
#endif

namespace kingman::kernels {

namespace {

SimdLevel detect_widest() {
#if KINGMAN_SIMD_COPIES && KINGMAN_GLIBC_CPU_FEATURES
  // glibc's record of the CPU, made by the dynamic loader before the program starts: "active"
  // means the CPU has the feature and the operating system saves its registers. Reading it
  // executes no CPUID, where GCC's CPU model (__builtin_cpu_supports) runs its own probe, a
  // dozen CPUID instructions, as a constructor of every program that links it: in a virtual
  // machine each one exits to the hypervisor (3.5 us on the AMD host), and the probe took
  // ~0.1 ms of every kingman process's start (bench/RESULTS.md, thirty-first session).
  if (CPU_FEATURE_ACTIVE(AVX512F)) return SimdLevel::avx512;
  if (CPU_FEATURE_ACTIVE(AVX2)) return SimdLevel::avx2;
#elif KINGMAN_SIMD_COPIES
  // GCC's CPU model checks that the operating system saves the wider registers too.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return SimdLevel::avx512;
  if (__builtin_cpu_supports("avx2")) return SimdLevel::avx2;
#endif
  return SimdLevel::baseline;
}

}  // namespace

namespace detail {

std::atomic<int> active_simd_level{kUnresolved};

int resolve_simd_level() {
  int expected = kUnresolved;
  const int widest = static_cast<int>(widest_simd_level());
  // Another thread, or set_simd_level, may have chosen first: that choice stands.
  if (active_simd_level.compare_exchange_strong(expected, widest, std::memory_order_relaxed))
    return widest;
  return expected;
}

}  // namespace detail

SimdLevel simd_level() {
  int level = detail::active_simd_level.load(std::memory_order_relaxed);
  if (level == detail::kUnresolved) level = detail::resolve_simd_level();
  return static_cast<SimdLevel>(level);
}

SimdLevel widest_simd_level() {
  static const SimdLevel widest = detect_widest();
  return widest;
}

void set_simd_level(SimdLevel level) {
  const SimdLevel widest = widest_simd_level();
  if (static_cast<int>(level) < 0 || static_cast<int>(level) > static_cast<int>(widest)) {
    throw std::invalid_argument(
        "this CPU (or build) cannot run the " + std::string(to_string(level)) +
        " copy of the kernels; the widest it can is " + std::string(to_string(widest)));
  }
  detail::active_simd_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

bool apply_simd_level_from_environment() {
  const char* value = std::getenv("KINGMAN_SIMD");
  if (!value || !*value) return false;
  const std::string_view name(value);
  for (const SimdLevel level : {SimdLevel::baseline, SimdLevel::avx2, SimdLevel::avx512}) {
    if (name == to_string(level)) {
      set_simd_level(level);
      return true;
    }
  }
  throw std::invalid_argument("KINGMAN_SIMD must be baseline, avx2 or avx512, got '" +
                              std::string(name) + "'");
}

std::string_view to_string(SimdLevel level) {
  switch (level) {
    case SimdLevel::baseline:
      return "baseline";
    case SimdLevel::avx2:
      return "avx2";
    case SimdLevel::avx512:
      return "avx512";
  }
  return "unknown";
}

}  // namespace kingman::kernels
