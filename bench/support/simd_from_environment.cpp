// Linked into every benchmark binary: KINGMAN_SIMD=baseline|avx2|avx512 runs that copy of the
// array kernels (simd_level.hpp), so that each copy can be timed on one machine, and the copy
// that ran is printed in the benchmark's context.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

#include "kingman/kernels/simd_level.hpp"

namespace {

const bool kSimdLevelApplied = [] {
  try {
    kingman::kernels::apply_simd_level_from_environment();
  } catch (const std::invalid_argument& error) {
    std::cerr << error.what() << "\n";
    std::exit(2);
  }
  benchmark::AddCustomContext("kingman_simd",
                              std::string(to_string(kingman::kernels::simd_level())));
  return true;
}();

}  // namespace
