// Greedy-Rate1 for the binary / multinomial likelihood, with the same generic-linkage scheme as
// greedy_rate1.cpp: each live cluster keeps its best partner among higher slots and a lower
// bound of that pair's height in a heap; rows whose best partner merged are rescanned lazily.
#include <algorithm>
#include <limits>
#include <vector>

#include "condensed_index.hpp"
#include "indexed_min_heap.hpp"
#include "kingman/inference/discrete_greedy.hpp"
#include "kingman/inference/discrete_merge_time.hpp"
#include "kingman/model/discrete_messages.hpp"

namespace kingman {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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
  const std::size_t n = data.n;
  MergeTree tree;
  tree.leaf_count = n;
  if (n < 2) return tree;
  tree.merges.reserve(n - 1);

  DiscreteMessages messages(data);
  Rate1PairScore score(messages);
  std::vector<double> pair_height(n * (n - 1) / 2);
  std::vector<std::size_t> best_partner(n, 0);
  std::vector<std::size_t> node_id(n);
  std::vector<char> active(n, 1);
  detail::IndexedMinHeap heap(n);
  auto height = [&](std::size_t i, std::size_t j) -> double& {
    return pair_height[detail::condensed_index(n, i, j)];
  };

  // Rescans row i (partners j > i); removes i from the heap if it has no live partner above.
  auto rescan = [&](std::size_t i) {
    double best = kInf;
    std::size_t partner = n;
    for (std::size_t j = i + 1; j < n; ++j) {
      if (active[j] && (partner == n || height(i, j) < best)) {
        best = height(i, j);
        partner = j;
      }
    }
    if (partner == n) {
      heap.remove(i);
      return;
    }
    best_partner[i] = partner;
    heap.set(i, best);
  };

  for (std::size_t i = 0; i < n; ++i) {
    node_id[i] = i;
    for (std::size_t j = i + 1; j < n; ++j) height(i, j) = score(i, j);
  }
  for (std::size_t i = 0; i + 1 < n; ++i) rescan(i);

  double current_height = 0.0;
  for (std::size_t step = 0; step + 1 < n; ++step) {
    std::size_t a = heap.top();
    // The heap holds lower bounds; a row whose best partner merged is rescanned until the top
    // is exact, and then it is the global minimum.
    while (!active[best_partner[a]] || height(a, best_partner[a]) != heap.key(a)) {
      rescan(a);
      a = heap.top();
    }
    const std::size_t b = best_partner[a];
    const double merge_height = std::max(height(a, b), current_height);
    messages.merge(a, b, -merge_height, b);
    tree.merges.push_back(
        {std::min(node_id[a], node_id[b]), std::max(node_id[a], node_id[b]), merge_height});
    current_height = merge_height;
    node_id[b] = n + step;
    active[a] = 0;
    heap.remove(a);

    for (std::size_t j = 0; j < b; ++j) {
      if (!active[j]) continue;
      const double h = height(j, b) = score(j, b);
      if (heap.contains(j) && h < heap.key(j)) {
        best_partner[j] = b;
        heap.set(j, h);
      }
    }
    for (std::size_t j = b + 1; j < n; ++j) {
      if (active[j]) height(b, j) = score(b, j);
    }
    rescan(b);
  }
  return tree;
}

}  // namespace kingman
