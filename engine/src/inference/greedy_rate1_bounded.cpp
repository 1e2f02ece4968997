// Brownian Greedy-Rate1 in O(n d + n k) memory: the bounded linkage (bounded_linkage.hpp) over
// the Rate1 heights of the Brownian messages, the same tree as greedy_rate1's full pair cache.
#include "bounded_linkage.hpp"
#include "kingman/inference/greedy.hpp"
#include "kingman/model/brownian_messages.hpp"
#include "rate1_pair_score.hpp"

namespace kingman {

std::size_t greedy_rate1_bounded_bytes(std::size_t n, std::size_t threads,
                                       std::size_t candidates_per_cluster) {
  return detail::bounded_linkage_bytes(n, threads, candidates_per_cluster);
}

MergeTree greedy_rate1_bounded(const WhitenedData& data, double leaf_variance,
                               std::size_t candidates_per_cluster) {
  BrownianMessages messages(data, leaf_variance);
  const detail::Rate1PairScore score(data, messages);
  return detail::bounded_linkage(data.n, score, candidates_per_cluster,
                                 [&](std::size_t low, std::size_t high, double height) {
                                   messages.merge(low, high, -height, low);
                                 });
}

}  // namespace kingman
