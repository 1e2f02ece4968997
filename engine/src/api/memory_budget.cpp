#include "kingman/memory_budget.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <cctype>
#include <charconv>
#include <cmath>

#include "kingman/error.hpp"

namespace kingman {

std::size_t default_memory_budget() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return std::size_t{8} << 30;  // unknown: assume 8 GiB
  return static_cast<std::size_t>(0.75 * static_cast<double>(pages) *
                                  static_cast<double>(page_size));
}

std::size_t parse_memory_size(const std::string& text, const std::string& option_name) {
  double value = 0.0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [rest, error] = std::from_chars(begin, end, value);
  std::string unit(rest, end);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && (unit.back() == 'B')) unit.pop_back();
  if (unit.size() > 1 && unit.back() == 'I') unit.pop_back();  // KiB, MiB, GiB
  double scale = 0.0;
  if (unit.empty() || unit == "B") scale = 1.0;
  if (unit == "K") scale = 1024.0;
  if (unit == "M") scale = 1024.0 * 1024.0;
  if (unit == "G") scale = 1024.0 * 1024.0 * 1024.0;
  if (unit == "T") scale = 1024.0 * 1024.0 * 1024.0 * 1024.0;
  if (error != std::errc() || scale == 0.0 || !(value > 0.0) || !std::isfinite(value)) {
    throw OptionError(option_name + ": '" + text +
                      "' is not a memory size (examples: 512M, 16G, 1000000)");
  }
  return static_cast<std::size_t>(value * scale);
}

std::string format_bytes(double bytes) {
  if (bytes >= 1024.0 * 1024.0 * 1024.0)
    return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  if (bytes >= 1024.0 * 1024.0) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0));
  return fmt::format("{:.0f} KiB", bytes / 1024.0);
}

}  // namespace kingman
