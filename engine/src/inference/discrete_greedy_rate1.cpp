// Greedy-Rate1 for the binary / multinomial likelihood: the generic linkage of
// generic_linkage.hpp over the discrete pairs' rate-1 heights.
#include <algorithm>
#include <limits>
#include <vector>

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
    messages.merge(a, b, -height, b);
  });
}

}  // namespace kingman
