// Greedy-Rate1 (MODEL.md section 4) with Mueller's generic linkage scheme: each live cluster
// keeps its best partner among higher slots and a lower bound of that pair's score in a heap;
// only rows whose best partner merged are rescanned, lazily, when they reach the top.
#include <cmath>
#include <limits>
#include <vector>

#include "condensed_index.hpp"
#include "indexed_min_heap.hpp"
#include "kingman/inference/greedy.hpp"
#include "kingman/inference/merge_duration.hpp"
#include "kingman/model/brownian_messages.hpp"
#include "rate1_pair_score.hpp"

namespace kingman {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

MergeTree greedy_rate1(const WhitenedData& data, double leaf_variance) {
  const std::size_t n = data.n;
  MergeTree tree;
  tree.leaf_count = n;
  if (n < 2) return tree;
  tree.merges.reserve(n - 1);

  BrownianMessages messages(data, leaf_variance);
  const detail::Rate1PairScore score(data, messages);
  std::vector<double> pair_height(n * (n - 1) / 2);
  std::vector<std::size_t> best_partner(n, 0);
  std::vector<std::size_t> node_id(n);
  std::vector<char> active(n, 1);
  detail::IndexedMinHeap heap(n);
  auto height = [&](std::size_t i, std::size_t j) -> double& {
    return pair_height[detail::condensed_index(n, i, j)];
  };

  // Rescans row i (partners j > i). Returns false if i has no live partner above it.
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
