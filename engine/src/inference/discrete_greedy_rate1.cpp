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

  double operator()(std::size_t i, std::size_t j) {
    pair_.assign(messages_, i, j);
    return 0.0 - optimal_merge_time(pair_, 1.0);  // 0 - t: a height of 0 is +0, never -0
  }

 private:
  const DiscreteMessages& messages_;
  DiscretePair pair_;  // scratch storage reused across pairs
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
