#pragma once
// The binary data of the discrete-likelihood benchmarks: n rows, d columns, 30 % ones and 10 %
// of entries missing (fixed seed), encoded with one mutation rate or with rates 0.5, 1, 2 by
// column.
#include <cmath>
#include <random>

#include "kingman/data/table.hpp"
#include "kingman/model/discrete_data.hpp"

namespace kingman::bench {

inline DiscreteData binary_data(std::size_t n, std::size_t d, bool per_column_rates) {
  std::mt19937_64 engine(5);
  std::bernoulli_distribution one(0.3), missing(0.1);
  Table table;
  table.rows = n;
  table.cols = d;
  table.source = "bench";
  for (std::size_t k = 0; k < n * d; ++k)
    table.values.push_back(missing(engine) ? std::nan("") : (one(engine) ? 1.0 : 0.0));
  DiscreteOptions options;
  for (std::size_t j = 0; per_column_rates && j < d; ++j)
    options.mutation_rates.push_back(0.5 * static_cast<double>(1 << (j % 3)));
  return encode_discrete(table, Likelihood::binary, options);
}

}  // namespace kingman::bench
