#include "smc_memory.hpp"

#include <algorithm>
#include <thread>

#include "../inference/smc/law_proposal_system.hpp"
#include "kingman/memory_budget.hpp"

namespace kingman::detail {

std::size_t SmcMemory::cluster_budget(std::size_t budget) const {
  const double left = static_cast<double>(budget) - fixed;
  // At least one byte: 0 would leave the clusters unchecked.
  return left >= 1.0 ? static_cast<std::size_t>(left) : 1;
}

std::size_t step_table_bytes(std::size_t budget) {
  constexpr std::size_t kLargest = std::size_t{64} << 20, kSmallest = std::size_t{1} << 20;
  return std::clamp(budget / 16, kSmallest, kLargest);
}

double law_proposal_table_bytes(Algorithm algorithm, std::size_t n, std::size_t particles,
                                std::size_t threads, std::size_t table_bytes) {
  if (algorithm != Algorithm::postpost && algorithm != Algorithm::mpost1 &&
      algorithm != Algorithm::mpost2)
    return 0.0;
  const double pairs = 0.5 * static_cast<double>(n) * (static_cast<double>(n) - 1.0);
  const double cap = static_cast<double>(table_bytes);
  // Shared groups' log masses and cumulative weights, two doubles per pair.
  double bytes = std::min(cap, 0.5 * static_cast<double>(particles) * pairs * 16.0);
  // A group of one particle's masses and cumulative weights, per thread.
  bytes += static_cast<double>(threads) * pairs * 16.0;
  if (algorithm == Algorithm::postpost) {
    // The needed pairs, a byte per group and pair within the cap.
    bytes += std::min(cap, static_cast<double>(particles) * pairs);
    // The shared laws and their slots: up to the table's cap (laws counted at kLawBytes),
    // about two pairs' worth per pair of the up to 2n clusters the states list.
    const double clusters = 2.0 * static_cast<double>(n);
    bytes += std::min(cap, 0.5 * clusters * clusters * (64.0 + static_cast<double>(kStepLawBytes)));
  }
  return bytes;
}

std::size_t run_memory_budget(const FitOptions& options) {
  return options.max_memory > 0 ? options.max_memory : default_memory_budget();
}

std::size_t run_threads(int threads) {
  if (threads > 0) return static_cast<std::size_t>(threads);
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace kingman::detail
