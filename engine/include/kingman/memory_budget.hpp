#pragma once
// Memory budgets: large allocations are checked against a budget before they are made, so a
// run that cannot fit is refused (or routed to a bounded-memory path) instead of swapping or
// being killed.
#include <cstddef>
#include <string>

namespace kingman {

// Three quarters of the machine's physical memory (the default --max-memory).
std::size_t default_memory_budget();

// Parses "512M", "16G", "2.5GB", "1000000" (bytes), "64k"; throws OptionError naming the option.
std::size_t parse_memory_size(const std::string& text, const std::string& option_name);

// "1.5 GB"-style text for messages.
std::string format_bytes(double bytes);

}  // namespace kingman
