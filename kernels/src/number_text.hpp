#pragma once
// A double in error messages: the shortest text that reads back as the same value ("1e+200",
// "0.25"), where std::to_string wrote fixed notation (300 digits for 1e300, "0.000000" for 1e-9).
#include <charconv>
#include <string>

namespace kingman::kernels::detail {

inline std::string number_text(double value) {
  char text[32];
  const auto [end, error] = std::to_chars(text, text + sizeof text, value);
  return error == std::errc() ? std::string(text, end) : std::string("?");
}

}  // namespace kingman::kernels::detail
