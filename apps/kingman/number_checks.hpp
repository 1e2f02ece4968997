#pragma once
// Checks of numeric options with plain messages. CLI11's PositiveNumber and NonNegativeNumber
// report a bad value as outside a range whose upper end, the largest double, they print with
// some 300 digits.
#include <CLI/CLI.hpp>
#include <string>

namespace kingman::cli {

// A number > 0 (or >= 0 when `zero_allowed`).
inline CLI::Validator number_check(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& input) -> std::string {
        double value = 0.0;
        if (!CLI::detail::lexical_cast(input, value))
          return "expected a number, got '" + input + "'";
        if (zero_allowed ? !(value >= 0.0) : !(value > 0.0))
          return std::string(zero_allowed ? "must be 0 or more" : "must be more than 0") +
                 ", got " + input;
        return std::string();
      },
      zero_allowed ? "NONNEGATIVE" : "POSITIVE");
}

// A number in [0, 1].
inline CLI::Validator unit_interval() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        double value = 0.0;
        if (!CLI::detail::lexical_cast(input, value))
          return "expected a number, got '" + input + "'";
        if (!(value >= 0.0 && value <= 1.0)) return "must be between 0 and 1, got " + input;
        return std::string();
      },
      "IN [0, 1]");
}

inline CLI::Validator positive_number() {
  return number_check(false);
}
inline CLI::Validator non_negative_number() {
  return number_check(true);
}

}  // namespace kingman::cli
