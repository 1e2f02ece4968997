// Greedy-Rate1 in O(n d + n k) memory: the same tree as the full pair cache, for n where
// n(n-1)/2 pair scores would not fit. Each live cluster keeps its k best partners (by the fixed
// Rate1 score) below a threshold that every unstored partner's score reaches or exceeds; the
// head of the list is therefore the cluster's true best partner while the list is non-empty,
// and an emptied list is rebuilt by one O(m d) scan. A heap over clusters, keyed by their list
// heads, gives the globally most recent pair.
#include <algorithm>
#include <limits>
#include <vector>

#include "../scheduler/parallel_for.hpp"
#include "indexed_min_heap.hpp"
#include "kingman/inference/greedy.hpp"
#include "kingman/model/brownian_messages.hpp"
#include "rate1_pair_score.hpp"

namespace kingman {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A partner in the order of the full-cache path (generic_linkage.hpp): by score, equal scores
// by slot. The heap's equal keys go to the smaller slot too, so both paths merge the pair that
// is smallest by (score, lower slot, higher slot), ties included.
struct Candidate {
  double score;
  std::size_t slot;  // the partner's slot, fixed while the partner lives
  std::size_t node;  // partner's node id (slots are reused by merged clusters; ids are not)
  bool operator<(const Candidate& other) const {
    return score < other.score || (score == other.score && slot < other.slot);
  }
};

constexpr Candidate kNoCandidate{kInf, std::numeric_limits<std::size_t>::max(),
                                 std::numeric_limits<std::size_t>::max()};

// A cluster's best partners: sorted, all before `threshold` in Candidate order; every live
// partner not in the list is at or after it (a score alone would not do: a partner left out
// with the head's score and a smaller slot would have to come first).
struct CandidateList {
  std::vector<Candidate> best;
  Candidate threshold = kNoCandidate;
};

}  // namespace

MergeTree greedy_rate1_bounded(const WhitenedData& data, double leaf_variance,
                               std::size_t candidates_per_cluster) {
  const std::size_t n = data.n;
  const std::size_t k = std::max<std::size_t>(1, candidates_per_cluster);
  MergeTree tree;
  tree.leaf_count = n;
  if (n < 2) return tree;
  tree.merges.reserve(n - 1);

  BrownianMessages messages(data, leaf_variance);
  const detail::Rate1PairScore score(data, messages);
  std::vector<std::size_t> node_of_slot(n), slot_of_node(2 * n - 1);
  std::vector<char> node_alive(2 * n - 1, 0);
  std::vector<std::size_t> live(n);  // live slots, ascending
  for (std::size_t i = 0; i < n; ++i) {
    node_of_slot[i] = slot_of_node[i] = live[i] = i;
    node_alive[i] = 1;
  }
  std::vector<CandidateList> lists(n);
  detail::IndexedMinHeap heap(n);
  std::vector<std::size_t> partners;
  std::vector<double> heights;
  std::vector<Candidate> row;

  // Scores of slot i against every other live slot, as candidates in `out` (one batched row:
  // the same values as score(i, j) pair by pair), through the caller's buffers.
  auto score_row = [&](std::size_t i, std::vector<std::size_t>& slots_buffer,
                       std::vector<double>& heights_buffer, std::vector<Candidate>& out) {
    slots_buffer.clear();
    for (std::size_t j : live)
      if (j != i) slots_buffer.push_back(j);
    heights_buffer.resize(slots_buffer.size());
    score.row(i, slots_buffer.data(), slots_buffer.size(), heights_buffer.data());
    out.clear();
    for (std::size_t r = 0; r < slots_buffer.size(); ++r)
      out.push_back({heights_buffer[r], slots_buffer[r], node_of_slot[slots_buffer[r]]});
  };
  // A list from `candidates`: the k best, the (k+1)-th as the threshold.
  auto fill_list = [&](CandidateList& list, std::vector<Candidate>& candidates) {
    const std::size_t kept = std::min(k, candidates.size());
    // Room for the k + 1 that offer() briefly holds: a list never reallocates after this
    // (lists filled on worker threads would otherwise be freed and regrown across malloc's
    // per-thread arenas, ~90 MB more peak memory at 100 000 points).
    list.best.reserve(k + 1);
    std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(kept),
                      candidates.end());
    list.best.assign(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(kept));
    list.threshold = kNoCandidate;
    for (std::size_t r = kept; r < candidates.size(); ++r)
      list.threshold = std::min(list.threshold, candidates[r]);
  };
  auto key_heap = [&](std::size_t i) {
    if (lists[i].best.empty()) {
      heap.remove(i);
    } else {
      heap.set(i, lists[i].best.front().score);
    }
  };
  // Rebuilds i's list from `row`.
  auto rebuild = [&](std::size_t i) {
    fill_list(lists[i], row);
    key_heap(i);
  };
  // Offers a new partner to i's list, keeping the invariant.
  auto offer = [&](std::size_t i, Candidate c) {
    CandidateList& list = lists[i];
    if (!(c < list.threshold)) return;
    list.best.insert(std::upper_bound(list.best.begin(), list.best.end(), c), c);
    if (list.best.size() > k) {
      list.threshold = std::min(list.threshold, list.best.back());
      list.best.pop_back();
    }
    if (list.best.front().node == c.node) heap.set(i, c.score);
  };

  // Every slot's list (n^2 pair scores, the largest part of the run): slots in parallel on the
  // run's threads, each task scoring whole rows in its own buffers; the heap is keyed
  // afterwards, in slot order. (The merges' rows run on one thread: split, their pieces and
  // the sequential work between them cost 2 threads 12-31 % more CPU time than 1 at 30 000
  // points; bench/RESULTS.md, fourteenth session.)
  detail::parallel_for_work(0, n, score.pair_work() * n, [&](const auto& slots) {
    thread_local std::vector<std::size_t> own_partners;
    thread_local std::vector<double> own_heights;
    thread_local std::vector<Candidate> own_row;
    for (std::size_t i = slots.begin(); i < slots.end(); ++i) {
      score_row(i, own_partners, own_heights, own_row);
      fill_list(lists[i], own_row);
    }
  });
  for (std::size_t i = 0; i < n; ++i) key_heap(i);

  double current_height = 0.0;
  for (std::size_t step = 0; step + 1 < n; ++step) {
    std::size_t a, b;
    for (;;) {
      a = heap.top();
      CandidateList& list = lists[a];
      while (!list.best.empty() && !node_alive[list.best.front().node])
        list.best.erase(list.best.begin());
      if (list.best.empty()) {
        score_row(a, partners, heights, row);
        rebuild(a);
        continue;
      }
      if (list.best.front().score != heap.key(a)) {
        heap.set(a, list.best.front().score);
        continue;
      }
      b = slot_of_node[list.best.front().node];
      break;
    }
    const double pair_height = lists[a].best.front().score;
    const double merge_height = std::max(pair_height, current_height);
    // The merged cluster takes the higher slot, as in the full-cache path.
    const std::size_t low = std::min(a, b), high = std::max(a, b);
    messages.merge(low, high, -merge_height, high);
    const std::size_t left = node_of_slot[low], right = node_of_slot[high];
    tree.merges.push_back({std::min(left, right), std::max(left, right), merge_height});
    current_height = merge_height;
    node_alive[left] = node_alive[right] = 0;
    const std::size_t merged = n + step;
    node_alive[merged] = 1;
    node_of_slot[high] = merged;
    slot_of_node[merged] = high;
    live.erase(std::lower_bound(live.begin(), live.end(), low));
    heap.remove(low);
    lists[low] = CandidateList{};

    score_row(high, partners, heights, row);
    for (const Candidate& c : row) offer(c.slot, {c.score, high, merged});
    rebuild(high);
  }
  return tree;
}

}  // namespace kingman
