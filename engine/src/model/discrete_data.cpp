// Encoding a numeric table as categorical data, with located errors for values outside the
// alphabet.
#include "kingman/model/discrete_data.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "kingman/error.hpp"

namespace kingman {

namespace {

// "file, data row R, column C (name)": 1-based, as the table reader's messages. The table keeps
// no line numbers (headers and blank lines are gone), hence "data row".
std::string location(const Table& table, std::size_t row, std::size_t col) {
  std::string where = fmt::format("{}, data row {}, column {}", table.source, row + 1, col + 1);
  if (col < table.column_names.size() && !table.column_names[col].empty()) {
    where += " (" + table.column_names[col] + ")";
  }
  return where;
}

std::size_t check_categories(const DiscreteOptions& options, Likelihood likelihood) {
  if (!options.categories) return 0;
  if (likelihood == Likelihood::binary) {
    throw OptionError("--categories applies to --likelihood multinomial; binary data has 2");
  }
  const std::size_t k = *options.categories;
  if (k < 2 || k > DiscreteData::kMaxCategories) {
    throw OptionError(fmt::format("--categories must be between 2 and {}, got {}",
                                  DiscreteData::kMaxCategories, k));
  }
  return k;
}

}  // namespace

double DiscreteData::log_base_term() const {
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < d; ++j) {
      const std::int32_t v = value(i, j);
      if (v != kMissing) sum += std::log(q(j)[v]);
    }
  }
  return sum;
}

DiscreteData encode_discrete(const Table& table, Likelihood likelihood,
                             const DiscreteOptions& options) {
  if (likelihood == Likelihood::brownian) {
    throw OptionError("encode_discrete: the brownian likelihood has no categories");
  }
  const std::size_t given_categories = check_categories(options, likelihood);
  const bool binary = likelihood == Likelihood::binary;
  // Largest value accepted before K is known.
  const double limit = binary ? 1.0
                       : given_categories > 0
                           ? static_cast<double>(given_categories - 1)
                           : static_cast<double>(DiscreteData::kMaxCategories - 1);

  DiscreteData data;
  data.n = table.rows;
  data.d = table.cols;
  data.values.resize(table.rows * table.cols);
  std::int32_t largest = 0;
  for (std::size_t i = 0; i < table.rows; ++i) {
    for (std::size_t j = 0; j < table.cols; ++j) {
      const double v = table.at(i, j);
      std::int32_t& code = data.values[i * table.cols + j];
      if (std::isnan(v)) {
        code = DiscreteData::kMissing;
        continue;
      }
      if (!(v >= 0.0 && v <= limit && v == std::floor(v))) {
        std::string expected;
        if (binary) {
          expected = "--likelihood binary takes 0 or 1";
        } else if (given_categories > 0) {
          expected = fmt::format("--categories {} takes the integers 0..{}", given_categories,
                                 given_categories - 1);
        } else {
          expected =
              fmt::format("--likelihood multinomial takes the integers 0..K-1 (K at most {})",
                          DiscreteData::kMaxCategories);
        }
        throw InputError(
            fmt::format("{}: value {} is outside the alphabet: {} (a missing entry "
                        "may be empty, NA or NaN)",
                        location(table, i, j), v, expected));
      }
      code = static_cast<std::int32_t>(v);
      largest = std::max(largest, code);
    }
  }
  data.categories = binary                 ? 2
                    : given_categories > 0 ? given_categories
                                           : std::max<std::size_t>(2, largest + 1);
  data.equilibrium =
      choose_equilibrium(data.values, data.n, data.d, data.categories, options.equilibrium);
  data.mutation_rate = choose_mutation_rates(options.mutation_rates, data.d);
  data.common_rate = std::all_of(data.mutation_rate.begin(), data.mutation_rate.end(),
                                 [&](double r) { return r == data.mutation_rate.front(); });
  return data;
}

}  // namespace kingman
