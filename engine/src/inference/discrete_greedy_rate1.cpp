// Greedy-Rate1 for the binary / multinomial likelihood: the linkages of generic_linkage.hpp (the
// full pair cache) and bounded_linkage.hpp (each cluster's best partners) over the discrete
// pairs' rate-1 heights.
#include <algorithm>
#include <limits>
#include <vector>

#include "bounded_linkage.hpp"
#include "generic_linkage.hpp"
#include "kingman/inference/discrete_greedy.hpp"
#include "kingman/inference/discrete_merge_time.hpp"
#include "kingman/model/discrete_messages.hpp"

namespace kingman {

namespace {

// Unclamped merge height of a pair under rate 1: the maximizer of t + log Z_C(t) does not
// depend on the current time, so it is fixed once the pair exists.
class Rate1PairScore {
 public:
  explicit Rate1PairScore(const DiscreteMessages& messages) : messages_(messages) {}

  // Called from several threads at once (generic_linkage.hpp): the scratch pair is per thread.
  double operator()(std::size_t i, std::size_t j) const {
    thread_local DiscretePair pair;  // storage reused across pairs
    pair.assign(messages_, i, j);
    return 0.0 - optimal_merge_time(pair, 1.0);  // 0 - t: a height of 0 is +0, never -0
  }

  // out[c] = the height of {i, partners[c]}, each pair taken in (smaller, larger) slot order as
  // the full cache takes it: the same bits from either end.
  void row(std::size_t i, const std::size_t* partners, std::size_t count, double* out) const {
    for (std::size_t c = 0; c < count; ++c)
      out[c] = (*this)(std::min(i, partners[c]), std::max(i, partners[c]));
  }

  // A pair's merge-time search: a few dozen evaluations over the columns.
  std::size_t pair_work() const { return 32 * (messages_.dims() + 1); }

 private:
  const DiscreteMessages& messages_;
};

}  // namespace

MergeTree greedy_rate1(const DiscreteData& data) {
  DiscreteMessages messages(data);
  Rate1PairScore score(messages);
  return detail::generic_linkage(data.n, score, [&](std::size_t a, std::size_t b, double height) {
    messages.merge(a, b, -height, a);
  });
}

MergeTree greedy_rate1_bounded(const DiscreteData& data, std::size_t candidates_per_cluster) {
  DiscreteMessages messages(data);
  const Rate1PairScore score(messages);
  return detail::bounded_linkage(data.n, score, candidates_per_cluster,
                                 [&](std::size_t low, std::size_t high, double height) {
                                   messages.merge(low, high, -height, low);
                                 });
}

}  // namespace kingman
