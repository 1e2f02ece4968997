#include "pair_storage_choice.hpp"

#include <string>

#include "../memory/large_array.hpp"
#include "kingman/error.hpp"
#include "kingman/memory_budget.hpp"

namespace kingman::detail {

double pair_cache_bytes(std::size_t n) {
  return large_block_footprint(0.5 * static_cast<double>(n) * (static_cast<double>(n) - 1.0) *
                               sizeof(double));
}

PairStorage choose_pair_storage(std::size_t n, const PairStorageNeeds& needs,
                                std::size_t memory_budget, PairStorage requested,
                                bool prefers_bounded) {
  const double budget = static_cast<double>(memory_budget);
  PairStorage storage = requested;
  if (storage == PairStorage::automatic) {
    storage =
        needs.full_bytes <= budget && !prefers_bounded ? PairStorage::full : PairStorage::bounded;
    // Preferred but too large where the full cache fits (a row per thread on very many threads
    // can outweigh the n^2/2 scores): the full cache.
    if (storage == PairStorage::bounded && needs.bounded_bytes > budget &&
        needs.full_bytes <= budget)
      storage = PairStorage::full;
  }
  const bool full = storage == PairStorage::full;
  const double need = full ? needs.full_bytes : needs.bounded_bytes;
  if (need > budget) {
    throw ResourceError(
        "greedy-rate1 on " + std::to_string(n) + " points needs " + format_bytes(need) +
        (full ? " with its full pair cache (--pair-storage full)"
              : " even without its pair cache (its best partners per cluster and "
                "a row per thread)") +
        ", more than the memory budget (--max-memory) of " + format_bytes(budget) +
        (full ? "; with --pair-storage bounded it needs " + format_bytes(needs.bounded_bytes)
              : std::string()));
  }
  return storage;
}

}  // namespace kingman::detail
