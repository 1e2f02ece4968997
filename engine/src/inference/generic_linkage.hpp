#pragma once
// Mueller's generic linkage over pair scores that are fixed once a pair exists (the Greedy-Rate1
// heights of MODEL.md section 4, for any likelihood): each live cluster keeps its best partner
// among higher slots and a lower bound of that pair's score in a heap; only rows whose best
// partner merged are rescanned, lazily, when they reach the top. O(n^2) scores, n(n-1)/2 doubles.
//
// score(i, j): the pair's unclamped merge height (called once per pair, i < j slots).
// A score may also offer score.row(i, partners, count, out): out[k] = the height of the pair
// {i, partners[k]}, equal to score(min, max) of that pair; the linkage then scores whole rows at
// once (the initial fill, and the new cluster against all live ones), so that the score can
// batch its distance computations. Rows are scored on the run's threads (parallel_for.hpp), the
// initial fill by rows and long new rows in pieces: the score is called concurrently, and each
// pair's height must not depend on which call computes it (then the tree does not depend on the
// thread count).
// merge(a, b, height): merge slot b into slot a (a < b) at `height`, the score clamped to the
// previous merge's height: the merged cluster takes the lower slot.
// A NaN height stops the run with a NumericalError naming its pair, as soon as it is computed.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <concepts>
#include <limits>
#include <mutex>
#include <numeric>
#include <type_traits>
#include <vector>

#include "../memory/large_array.hpp"
#include "../scheduler/parallel_for.hpp"
#include "condensed_index.hpp"
#include "indexed_min_heap.hpp"
#include "kingman/error.hpp"
#include "kingman/kernels/vector_math.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman::detail {

template <typename Score>
concept RowScore = requires(Score& score, std::size_t i, const std::size_t* partners,
                            std::size_t count, double* out) {
  score.row(i, partners, count, out);
};

// A score may also offer score.rows(slots, slot_count, partners, count, out): out[q][k] = the
// height of the pair {slots[q], partners[k]}, the same values as row() slot by slot, reading
// each partner's data once for all the slots (the initial fill, kRowsTogether rows at a time).
template <typename Score>
concept RowsScore = requires(Score& score, const std::size_t* slots, const std::size_t* partners,
                             std::size_t count, double* const* out) {
  score.rows(slots, count, partners, count, out);
};

// Rows of the initial fill scored together by a RowsScore.
inline constexpr std::size_t kRowsTogether = 8;

// A score may state the rough cost of one pair in arithmetic operations (parallel_for.hpp), so
// that rows too small to share stay on one thread.
template <typename Score>
concept PairWorkScore = requires(const Score& score) {
  { score.pair_work() } -> std::convertible_to<std::size_t>;
};

// out[k] = the height of the pair {i, partners[k]} for k < count, by rows where the score has
// them. The score is called from several threads at once (its pairs only read the messages).
template <typename Score>
void score_pairs(Score& score, std::size_t i, const std::size_t* partners, std::size_t count,
                 double* out) {
  if constexpr (RowScore<std::remove_reference_t<Score>>) {
    score.row(i, partners, count, out);
  } else {
    for (std::size_t k = 0; k < count; ++k)
      out[k] = i < partners[k] ? score(i, partners[k]) : score(partners[k], i);
  }
}

template <typename Score>
std::size_t pair_work(const Score& score) {
  if constexpr (PairWorkScore<Score>) {
    return score.pair_work();
  } else {
    return 64;
  }
}

// How many partners ahead the column writes of a new row are prefetched (for writing). Each
// write of a column lands in its own cache line, which the store then waits for; with the stores
// one after another, the store buffer filled and the loop stalled (25 % of Greedy-Rate1 at
// 10 000 points on a Xeon host). Requested 16 ahead, the lines arrive while earlier stores
// retire: -8.7 % there (8, 16 and 24 measured alike; bench/RESULTS.md).
inline constexpr std::size_t kColumnPrefetchDistance = 16;

// What a new row's loop counts, in the arithmetic operations of parallel_for.hpp, for storing
// one height into the pair matrix, beside the distance (d + 8 operations). The stores into a
// column land in a cache line each: at 10 000 points on one thread a partner takes ~30 ns in
// all where its distance takes ~11, so the store is worth ~64 operations. Counted with the
// distance alone, rows were shared out only beyond ~9 400 partners at d = 20, and at 10 000
// points nearly every merge ran on one thread (1.5x on 16 cores). But sharing a row costs
// ~30 us of CPU time on 2 threads (the fork, the join, and the worker waiting through the
// merge's serial part), so rows much shorter than that are not worth it: counting 64 shared
// rows beyond ~2 800 partners and cost 2 threads +2 ... +13 % CPU; counting 16 shares them
// beyond ~6 000 for +4 % (bench/RESULTS.md, twenty-second session).
inline constexpr std::size_t kColumnStoreWork = 16;

// The smallest of the heights that the pieces of a row offer, each with its place in the row;
// ties go to the smaller place, so the result does not depend on the order the pieces finish
// in. Offers come from several threads at once.
class RowMinimumOffers {
 public:
  void clear() { found_ = false; }
  void offer(double height, std::size_t place) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!found_ || height < height_ || (height == height_ && place < place_)) {
      found_ = true;
      height_ = height;
      place_ = place;
    }
  }
  // The place of the smallest offer, or `otherwise` where nothing was offered.
  std::size_t place(std::size_t otherwise) const { return found_ ? place_ : otherwise; }

 private:
  std::mutex mutex_;
  bool found_ = false;
  double height_ = 0.0;
  std::size_t place_ = 0;
};

template <typename Score, typename MergeSlots>
MergeTree generic_linkage(std::size_t n, Score&& score, MergeSlots&& merge) {
  MergeTree tree;
  tree.leaf_count = n;
  if (n < 2) return tree;
  tree.merges.reserve(n - 1);

  // Every entry is written by the scoring loop below, which takes the pages' first touches on
  // the run's threads (large_array.hpp).
  LargeArray<double> pair_height(n * (n - 1) / 2);
  std::vector<std::size_t> best_partner(n, 0);
  std::vector<std::size_t> node_id(n);
  std::vector<char> active(n, 1);
  IndexedMinHeap heap(n);
  auto height = [&](std::size_t i, std::size_t j) -> double& {
    return pair_height[condensed_index(n, i, j)];
  };
  auto throw_nan_height = [&](std::size_t i, std::size_t j) {
    throw NumericalError(
        fmt::format("greedy linkage: the merge height of nodes {} and {} is not a number",
                    std::min(node_id[i], node_id[j]), std::max(node_id[i], node_id[j])));
  };

  // The live slots in increasing order: rows and rescans visit only these (late in a run most
  // slots are dead), and the new cluster's pieces read their partners from it.
  std::vector<std::size_t> live(n);
  std::iota(live.begin(), live.end(), std::size_t{0});

  // Rescans row i (partners j > i); removes i from the heap if it has no live partner above.
  // The first of equal heights wins (the smallest slot).
  auto rescan = [&](std::size_t i) {
    double best = std::numeric_limits<double>::infinity();
    std::size_t partner = n;
    const auto first = std::upper_bound(live.begin(), live.end(), i);
    if (first != live.end()) {
      const double* row = &height(i, i + 1);  // row[j - i - 1] = height(i, j)
      for (auto at = first; at != live.end(); ++at) {
        const std::size_t j = *at;
        const double h = row[j - i - 1];
        if (partner == n || h < best) {
          best = h;
          partner = j;
        }
      }
    }
    if (partner == n) {
      heap.remove(i);
      return;
    }
    best_partner[i] = partner;
    heap.set(i, best);
  };

  // Per initial row i, its best partner's place in the row (partner i + 1 + row_best[i]): found
  // by the fill's tasks while the row is still in their cache, where a rescan after the fill read
  // the whole matrix again on one thread (5 % of Greedy-Rate1 at 10 000 points).
  std::vector<std::size_t> row_best(n, 0);
  // Per initial row, whether a height in it is NaN: a NaN score makes the greedy choice
  // undefined wherever it lies, so the run stops with the first such pair (in row order, the
  // same pair whatever the thread count) before any merge.
  std::vector<char> row_has_nan(n, 0);
  // A row's best partner is its first smallest height, or the first where all are +inf (what
  // rescan() finds, as no entry is NaN).
  auto check_initial_row = [&](std::size_t i) {
    const std::size_t count = n - i - 1;
    bool has_nan = false;
    const std::size_t least = kernels::first_minimum_below(
        &height(i, i + 1), count, std::numeric_limits<double>::infinity(), has_nan);
    row_best[i] = least < count ? least : 0;
    row_has_nan[i] = has_nan;
  };
  std::vector<std::size_t> partners(n);  // 0, 1, ..., n - 1: the partners of the initial rows
  std::vector<double> row_heights;
  std::vector<char> improves;  // per partner below a of a new row: a becomes its best partner
  // The new row's smallest height over its partners above a, from the pieces that score it: a's
  // rescan done by the threads, not by this one while the others wait (7 us a step at 10 000
  // points, most of the serial part).
  RowMinimumOffers new_row_minimum;
  std::iota(partners.begin(), partners.end(), std::size_t{0});
  std::iota(node_id.begin(), node_id.end(), std::size_t{0});
  // The rows of the condensed matrix (pairs (i, j > i), contiguous), on the run's threads: each
  // pair's height is computed alone, so the split never changes a value.
  const std::size_t work = pair_work(score);
  // Where no merge row will be long enough to split, these scores are the run's only split
  // loop, and they start its workers only if they pay for that.
  const bool rows_split = n > 2 && n - 2 > kMinLoopWork / (work + kColumnStoreWork);
  parallel_for_work(
      0, n, work * (n / 2 + 1),
      [&](const auto& rows) {
        if constexpr (RowsScore<std::remove_reference_t<Score>>) {
          // Rows first .. first + q - 1 together against their common partners from first + q on;
          // each row's few partners inside the block alone.
          std::size_t slots[kRowsTogether];
          double* out[kRowsTogether];
          for (std::size_t first = rows.begin(); first < rows.end(); first += kRowsTogether) {
            const std::size_t q = std::min(kRowsTogether, rows.end() - first);
            const std::size_t common = first + q;
            for (std::size_t r = 0; r < q; ++r) {
              const std::size_t i = first + r;
              if (i + 1 < common)
                score_pairs(score, i, partners.data() + i + 1, common - i - 1, &height(i, i + 1));
              slots[r] = i;
              out[r] = common < n ? &height(i, common) : nullptr;
            }
            if (common < n) score.rows(slots, q, partners.data() + common, n - common, out);
            for (std::size_t i = first; i < first + q; ++i)
              if (i + 1 < n) check_initial_row(i);
          }
        } else {
          for (std::size_t i = rows.begin(); i < rows.end(); ++i) {
            if (i + 1 >= n) continue;
            score_pairs(score, i, partners.data() + i + 1, n - i - 1, &height(i, i + 1));
            check_initial_row(i);
          }
        }
      },
      kTasksPerThread, rows_split ? LoopPlace::among_others : LoopPlace::alone);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if (row_has_nan[i])
      throw_nan_height(i, i + 1 + kernels::first_nan(&height(i, i + 1), n - i - 1));
    best_partner[i] = i + 1 + row_best[i];
    heap.set(i, height(i, best_partner[i]));
  }

  // Every height is checked for NaN when it is computed (throw_nan_height), so none reaches the
  // heap; were one to, it would never equal its heap key, and the loop below would rescan its
  // row forever: stop with the pair instead.
  auto check_top = [&](std::size_t a) {
    if (std::isnan(heap.key(a))) throw_nan_height(a, best_partner[a]);
  };
  double current_height = 0.0;
  for (std::size_t step = 0; step + 1 < n; ++step) {
    std::size_t a = heap.top();
    check_top(a);
    // The heap holds lower bounds; a row whose best partner merged is rescanned until the top
    // is exact, and then it is the global minimum.
    while (!active[best_partner[a]] || height(a, best_partner[a]) != heap.key(a)) {
      rescan(a);
      a = heap.top();
      check_top(a);
    }
    // The merged cluster takes the lower slot a, and b's slot dies. Its new row then has the
    // partners below a in a column of the pair matrix (scattered writes, a cache line each) and
    // those above a in its row (contiguous): with the higher slot it had twice as many in the
    // column, and Greedy-Rate1 at 10 000 points took 16 % longer (bench/RESULTS.md).
    const std::size_t b = best_partner[a];
    const double merge_height = std::max(height(a, b), current_height);
    merge(a, b, merge_height);
    tree.merges.push_back(
        {std::min(node_id[a], node_id[b]), std::max(node_id[a], node_id[b]), merge_height});
    current_height = merge_height;
    node_id[a] = n + step;
    active[b] = 0;
    heap.remove(b);
    live.erase(std::lower_bound(live.begin(), live.end(), b));

    // The new cluster's row against every live slot, in parallel pieces where it is long. Each
    // piece also stores its heights in the pair matrix (a column of it for the slots below a,
    // writes that overlap across threads) and marks the slots whose best partner a becomes; the
    // heap is updated afterwards, on this thread. A slot's test reads only its own heap entry
    // and partner, which no piece writes, so it does not depend on the split. Partner k is
    // live[k] below a's place in the list and live[k + 1] from it: the pieces read the list
    // itself, so this thread copies nothing while the others wait.
    const std::size_t below_a =
        static_cast<std::size_t>(std::lower_bound(live.begin(), live.end(), a) - live.begin());
    const std::size_t partner_count = live.size() - 1;
    row_heights.resize(partner_count);
    improves.resize(below_a);  // every entry is written by its piece
    new_row_minimum.clear();
    std::atomic<bool> new_row_has_nan{false};  // read after the loop's join
    parallel_for_work(
        0, partner_count, work + kColumnStoreWork,
        [&](const auto& range) {
          const std::size_t begin = range.begin(), end = range.end();
          const std::size_t split = std::clamp(below_a, begin, end);
          if (split > begin)
            score_pairs(score, a, live.data() + begin, split - begin, row_heights.data() + begin);
          if (end > split)
            score_pairs(score, a, live.data() + split + 1, end - split, row_heights.data() + split);
          for (std::size_t k = begin; k < split; ++k) {
            const std::size_t j = live[k];
            const double h = row_heights[k];
            const std::size_t ahead = k + kColumnPrefetchDistance;
            if (ahead < split) __builtin_prefetch(&height(live[ahead], a), 1);
            height(j, a) = h;
            // Ties go to the smaller partner slot, as in a rescan, so that the pair merged is
            // always the smallest by (height, lower slot, higher slot), whatever the order the
            // pairs came in (greedy_rate1_bounded follows the same order). Where the best
            // partner has merged the key is only a lower bound, and an equal height is left to
            // the rescan.
            improves[k] = heap.contains(j) &&
                          (h < heap.key(j) ||
                           (h == heap.key(j) && active[best_partner[j]] && a < best_partner[j]));
          }
          for (std::size_t k = split; k < end; ++k) height(a, live[k + 1]) = row_heights[k];
          // Whether a height of the piece is NaN, and a's own row (its partners above it): the
          // piece's first smallest height there, offered to the row's minimum (one pass).
          bool has_nan =
              kernels::first_nan(row_heights.data() + begin, split - begin) < split - begin;
          if (end > split) {
            bool row_nan = false;
            const std::size_t least =
                kernels::first_minimum_below(row_heights.data() + split, end - split,
                                             std::numeric_limits<double>::infinity(), row_nan);
            if (least < end - split)
              new_row_minimum.offer(row_heights[split + least], split + least);
            has_nan = has_nan || row_nan;
          }
          if (has_nan) new_row_has_nan.store(true, std::memory_order_relaxed);
        },
        kUniformTasksPerThread);
    if (new_row_has_nan.load(std::memory_order_relaxed)) {
      const std::size_t k = kernels::first_nan(row_heights.data(), partner_count);
      throw_nan_height(a, k < below_a ? live[k] : live[k + 1]);
    }
    for (std::size_t k = 0; k < below_a; ++k) {
      if (!improves[k]) continue;
      best_partner[live[k]] = a;
      heap.set(live[k], row_heights[k]);
    }
    // What rescan(a) would find, from the pieces' minima: the first smallest height, or the
    // first where all are +inf (none is NaN).
    if (below_a < partner_count) {
      const std::size_t k = new_row_minimum.place(below_a);
      best_partner[a] = live[k + 1];
      heap.set(a, row_heights[k]);
    } else {
      heap.remove(a);
    }
  }
  return tree;
}

}  // namespace kingman::detail
