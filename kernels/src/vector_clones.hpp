#pragma once
// KINGMAN_VECTOR_CLONES marks an array kernel that GCC compiles three times, for AVX-512, for
// AVX2 and for the baseline x86-64 (SSE2), picking the widest copy the CPU has at load time: up
// to four times the doubles per instruction in the portable build (KINGMAN_NATIVE=OFF). The
// copies perform the same IEEE operations in the same order (the kernels fix their summation
// orders explicitly, and kernels/CMakeLists.txt compiles them with -ffp-contract=off because
// GCC's AVX-512 target would otherwise fuse multiplies and adds), so results are bit-identical
// whichever copy runs. Elsewhere (other compilers, other architectures) the macro is empty, and
// so it is under ThreadSanitizer: the clones' resolvers run while the dynamic loader relocates
// the program, before the sanitizer's runtime is initialized, and TSan's instrumentation of them
// crashed every test binary at load (the baseline copy computes the same bits anyway).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(__SANITIZE_THREAD__)
#define KINGMAN_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KINGMAN_VECTOR_CLONES
#endif
