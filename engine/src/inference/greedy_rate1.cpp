// Greedy-Rate1 (MODEL.md section 4) for the Brownian model: the generic linkage of
// generic_linkage.hpp over the pairs' rate-1 heights.
#include <cstddef>

#include "generic_linkage.hpp"
#include "kingman/inference/greedy.hpp"
#include "kingman/inference/merge_duration.hpp"
#include "kingman/model/brownian_messages.hpp"
#include "rate1_pair_score.hpp"

namespace kingman {

MergeTree greedy_rate1(const WhitenedData& data, double leaf_variance) {
  BrownianMessages messages(data, leaf_variance);
  const detail::Rate1PairScore score(data, messages);
  return detail::generic_linkage(data.n, score, [&](std::size_t a, std::size_t b, double height) {
    messages.merge(a, b, -height, a);
  });
}

}  // namespace kingman
