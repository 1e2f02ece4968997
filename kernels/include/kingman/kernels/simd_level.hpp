#pragma once
// Which copy of the array kernels runs. Every array kernel (pair_kernels.hpp, offset_sums.hpp,
// vector_math.hpp, the batched Bessel terms, the GIG panels) is compiled three times on x86-64
// with GCC: for AVX-512, for AVX2 and for the baseline x86-64 (SSE2), each copy with vectors of
// the width its instructions have. The copies perform the same IEEE operations in the same order,
// so they give the same bits; the widest one the CPU supports is chosen when the library loads.
// Tests run every copy the CPU has and compare them; benchmarks time each on one machine.
// Elsewhere (other compilers or architectures) there is one copy, the baseline.
#include <string_view>

namespace kingman::kernels {

enum class SimdLevel : int { baseline = 0, avx2 = 1, avx512 = 2 };

// The copy the kernels run now.
SimdLevel simd_level();

// The widest copy this CPU can run (baseline where the build has only that one).
SimdLevel widest_simd_level();

// Makes the kernels run the copy for `level`, which must not exceed widest_simd_level()
// (std::invalid_argument otherwise). Not synchronized with kernels that are running: for tests
// and benchmarks, between runs. Values never depend on it.
void set_simd_level(SimdLevel level);

// "baseline", "avx2" or "avx512".
std::string_view to_string(SimdLevel level);

// The environment variable KINGMAN_SIMD, if set, names the copy to run ("baseline", "avx2" or
// "avx512"): for timing or checking one copy of a whole program on a CPU that would pick another.
// Sets it and returns true; returns false when the variable is unset or empty; throws
// std::invalid_argument naming the value when it is not one of those names or exceeds
// widest_simd_level(). The library never reads the variable by itself: programs call this
// (the kingman command line and the benchmarks do).
bool apply_simd_level_from_environment();

}  // namespace kingman::kernels
