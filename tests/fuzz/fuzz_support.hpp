#pragma once
// What the fuzz targets share: reading the input bytes, and the checks of a fit's result.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "kingman/api.hpp"

namespace kingman::fuzz {

// The fuzzer's input, read a byte at a time; 0 once it runs out.
struct Bytes {
  const std::uint8_t* next;
  std::size_t left;

  std::uint8_t byte() {
    if (left == 0) return 0;
    --left;
    return *next++;
  }
};

// Stops the run (a crash the fuzzer records) with `what` when `ok` is false.
inline void expect(bool ok, const char* target, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "%s: %s\n", target, what);
    std::abort();
  }
}

// A result that fit() returned for a table of `rows` rows: particles, complete trees with finite
// non-negative heights, finite weights and evidence, a log joint that is not NaN.
inline void expect_sound_result(const FitResult& result, std::size_t rows, const char* target) {
  expect(!result.particles.empty(), target, "no particles");
  for (const Particle& particle : result.particles) {
    expect(std::isfinite(particle.weight), target, "a non-finite particle weight");
    expect(std::isfinite(particle.log_weight) || particle.weight == 0.0, target,
           "a non-finite log weight");
    expect(particle.tree.merges.size() + 1 == rows, target, "an incomplete tree");
    for (const Merge& merge : particle.tree.merges)
      expect(std::isfinite(merge.height) && merge.height >= 0.0, target, "a bad merge height");
  }
  if (result.log_evidence)
    expect(std::isfinite(*result.log_evidence), target, "a non-finite evidence");
  expect(!std::isnan(result.log_joint), target, "a NaN log joint");
}

}  // namespace kingman::fuzz
