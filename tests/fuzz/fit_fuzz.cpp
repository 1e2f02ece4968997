// libFuzzer target: kingman::fit on tiny tables (2-8 rows, 1-4 columns) of values drawn to reach
// the edges of double precision (ties, 1e-8 and 1e8 steps, raw bit patterns, zeros) and missing
// entries, with any algorithm, covariance, leaf variance and particle count, on one thread.
// Documented errors (kingman::Error) are fine; a crash, a sanitizer report, a hang (-timeout),
// another exception type, or a result holding a non-finite number is a bug.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "fuzz_support.hpp"
#include "kingman/api.hpp"
#include "kingman/error.hpp"

namespace {

using kingman::fuzz::Bytes;

// One table entry: ties, 1e-8 and 1e8 steps, any finite double, zeros and ones, or missing.
double value(Bytes& in) {
  const std::uint8_t kind = in.byte();
  if (kind >= 248) return std::numeric_limits<double>::quiet_NaN();  // a missing entry
  const double small = static_cast<double>(static_cast<int>(in.byte()) - 128);
  switch (kind % 8) {
    case 0:
      return small;  // integers: ties and duplicates
    case 1:
      return small * 1e-8;
    case 2:
      return small * 1e8;
    case 3: {  // any finite double
      std::uint64_t bits = static_cast<std::uint64_t>(in.byte());
      for (int i = 0; i < 7; ++i) bits = (bits << 8) | in.byte();
      double v;
      std::memcpy(&v, &bits, sizeof v);
      return std::isfinite(v) ? v : 0.0;
    }
    case 4:
      return 0.0;
    case 5:
      return 1.0;
    default:
      return small / 16.0;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in{data, size};
  const std::uint8_t shape = in.byte(), choice = in.byte(), settings = in.byte();
  kingman::Table table;
  table.rows = 2 + shape % 7;
  table.cols = 1 + (shape / 7) % 4;
  table.source = "fuzz";
  for (std::size_t i = 0; i < table.rows * table.cols; ++i) table.values.push_back(value(in));
  kingman::FitOptions options;
  options.algorithm = static_cast<kingman::Algorithm>(choice % 10);
  options.brownian.covariance = static_cast<kingman::CovarianceKind>((choice / 10) % 5);
  constexpr double kLeafVariances[] = {-1.0, 0.0, 1e-3, 1.0};  // -1: left to kingman
  if (kLeafVariances[settings % 4] >= 0.0)
    options.brownian.leaf_variance = kLeafVariances[settings % 4];
  options.particles = 1 + (settings / 4) % 4;
  options.threads = 1;
  options.seed = settings;
  options.max_memory = std::size_t{1} << 30;
  try {
    const kingman::FitResult result = kingman::fit(table, options);
    kingman::fuzz::expect_sound_result(result, table.rows, "fit_fuzz");
    for (const double v : result.covariance_diagonal)
      kingman::fuzz::expect(std::isfinite(v) && v > 0.0, "fit_fuzz", "a bad covariance entry");
  } catch (const kingman::Error&) {
  }
  return 0;
}
