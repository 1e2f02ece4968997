#pragma once
// Greedy-Rate1's choice between its full pair cache (generic_linkage.hpp) and its bounded
// path (bounded_linkage.hpp) against the memory budget, for every likelihood: the Brownian
// one (greedy_rescan.cpp) and the binary / multinomial one (discrete_greedy_rescan.cpp).
#include <cstddef>

#include "kingman/options.hpp"

namespace kingman::detail {

// Bytes of n(n-1)/2 pair scores, as the block that holds them takes (large_array.hpp).
double pair_cache_bytes(std::size_t n);

// What each storage needs in all on n points: the likelihood's data and messages (base) plus
// the pair cache, or plus the bounded path's lists and per-thread rows.
struct PairStorageNeeds {
  double full_bytes;
  double bounded_bytes;
};

// `requested` unless it is automatic; else bounded where `prefers_bounded` or the full cache
// does not fit, full otherwise (full too where the bounded path alone does not fit but the
// full cache does). Throws ResourceError, saying what each storage needs, when the chosen one
// does not fit `memory_budget`.
PairStorage choose_pair_storage(std::size_t n, const PairStorageNeeds& needs,
                                std::size_t memory_budget, PairStorage requested,
                                bool prefers_bounded);

}  // namespace kingman::detail
