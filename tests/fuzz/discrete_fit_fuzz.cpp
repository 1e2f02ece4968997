// libFuzzer target: kingman::fit with the binary and multinomial likelihoods on tiny tables
// (2-8 rows, 1-4 columns) of categories, missing entries and the odd value outside the alphabet,
// with any algorithm, equilibrium (from the data, uniform, or given probabilities down to 1e-300),
// mutation rates from 1e-300 to 1e300 (one or one per column), categories, resampling scheme,
// ESS threshold and particle count, on one thread. Documented errors (kingman::Error) are fine;
// a crash, a sanitizer report, a hang (-timeout), another exception type, or a result holding a
// non-finite number is a bug.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "fuzz_support.hpp"
#include "kingman/api.hpp"
#include "kingman/error.hpp"

namespace {

using kingman::fuzz::Bytes;

// A positive number spanning the range of doubles: 1, tiny, huge, or moderate steps.
double positive(std::uint8_t code) {
  constexpr double kValues[] = {1.0, 1e-300, 1e300, 1e-8, 1e8, 0.5, 3.0, 1e-3};
  return kValues[code % 8] * (1.0 + static_cast<double>(code / 8) / 4.0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in{data, size};
  const std::uint8_t shape = in.byte(), choice = in.byte(), settings = in.byte(), model = in.byte();
  kingman::Table table;
  table.rows = 2 + shape % 7;
  table.cols = 1 + (shape / 7) % 4;
  table.source = "fuzz";
  const bool binary = (model & 1) == 0;
  const std::size_t alphabet = binary ? 2 : 2 + (model / 2) % 4;  // values drawn from 0..K-1
  for (std::size_t i = 0; i < table.rows * table.cols; ++i) {
    const std::uint8_t code = in.byte();
    if (code >= 240) {
      table.values.push_back(std::numeric_limits<double>::quiet_NaN());  // missing
    } else if (code == 239) {
      table.values.push_back(static_cast<double>(alphabet) - 0.5);  // outside the alphabet
    } else {
      table.values.push_back(static_cast<double>(code % alphabet));
    }
  }
  kingman::FitOptions options;
  options.algorithm = static_cast<kingman::Algorithm>(choice % 10);
  options.likelihood = binary ? kingman::Likelihood::binary : kingman::Likelihood::multinomial;
  if (!binary && (model / 8) % 2 == 1) options.discrete.categories = alphabet + (model / 16) % 2;
  switch ((choice / 10) % 4) {
    case 0:
      break;  // data frequencies
    case 1:
      options.discrete.equilibrium.kind = kingman::EquilibriumKind::uniform;
      break;
    default: {  // given: K probabilities (one Q for binary), some tiny, normalized
      options.discrete.equilibrium.kind = kingman::EquilibriumKind::given;
      const std::size_t k =
          binary && (choice / 40) % 2 == 0
              ? 1
              : (options.discrete.categories ? *options.discrete.categories : alphabet);
      double sum = 0.0;
      for (std::size_t c = 0; c < k; ++c) {
        options.discrete.equilibrium.probabilities.push_back(positive(in.byte()));
        sum += options.discrete.equilibrium.probabilities.back();
      }
      for (double& q : options.discrete.equilibrium.probabilities)
        q = k == 1 ? q / (1.0 + q) : q / sum;
    }
  }
  switch (settings % 3) {
    case 0:
      break;  // the default rate 1
    case 1:
      options.discrete.mutation_rates.push_back(positive(in.byte()));
      break;
    default:
      for (std::size_t j = 0; j < table.cols; ++j)
        options.discrete.mutation_rates.push_back(positive(in.byte()));
  }
  options.particles = 1 + (settings / 3) % 4;
  options.resampling = static_cast<kingman::kernels::ResamplingScheme>((settings / 12) % 4);
  constexpr double kThresholds[] = {0.5, 0.0, 1.0, 0.99};
  options.ess_threshold = kThresholds[(settings / 48) % 4];
  options.threads = 1;
  options.seed = in.byte();
  options.max_memory = std::size_t{1} << 30;
  try {
    kingman::fuzz::expect_sound_result(kingman::fit(table, options), table.rows,
                                       "discrete_fit_fuzz");
  } catch (const kingman::Error&) {
  }
  return 0;
}
