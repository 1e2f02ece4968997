#pragma once
// Greedy-Rate1's linkage in O(n k) memory beyond the score's own data: the same tree as the
// full pair cache (generic_linkage.hpp), for n where n(n-1)/2 pair scores would not fit. Each
// live cluster keeps its k best partners (by the fixed Rate1 score) below a threshold that
// every unstored partner's score reaches or exceeds; the head of the list is therefore the
// cluster's true best partner while the list is non-empty, and an emptied list is rebuilt by
// one scan of its row. A heap over clusters, keyed by their list heads, gives the globally
// most recent pair.
//
// score.row(i, partners, count, out): out[c] = the height of the pair {i, partners[c]}, a pure
// function of the pair (the same value from either end: score(i, j) = score(j, i) bit for bit),
// called concurrently from the run's threads; score.pair_work(): its rough cost per pair
// (parallel_for.hpp). Where the score is a RowsScore (generic_linkage.hpp) the initial lists
// score several rows at once. merge(low, high, height): merge slot high into slot low at
// `height`, the pair's score clamped to the previous merge's height.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "../scheduler/parallel_for.hpp"
#include "generic_linkage.hpp"
#include "indexed_min_heap.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman::detail {

namespace bounded_linkage_detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

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

inline constexpr Candidate kNoCandidate{kInf, std::numeric_limits<std::size_t>::max(),
                                        std::numeric_limits<std::size_t>::max()};

// A cluster's best partners: sorted, all before `threshold` in Candidate order; every live
// partner not in the list is at or after it (a score alone would not do: a partner left out
// with the head's score and a smaller slot would have to come first).
struct CandidateList {
  std::vector<Candidate> best;
  Candidate threshold = kNoCandidate;
};

// A thread's buffers for one row (the partners' slots, their heights, the candidates), used by
// the initial lists and by the merges' pieces alike.
struct RowBuffers {
  std::vector<std::size_t> slots;
  std::vector<double> heights;
  std::vector<Candidate> row;
};

// Slots per block of the initial lists' tiles: a tile of two blocks' pair scores is 32 KiB.
inline constexpr std::size_t kTileSlots = 64;

inline RowBuffers& thread_row_buffers() {
  thread_local RowBuffers buffers;
  return buffers;
}

}  // namespace bounded_linkage_detail

// Bytes of bounded_linkage's own structures on n points with `threads` threads and k
// candidates per cluster: the lists and one row's buffers per thread.
inline std::size_t bounded_linkage_bytes(std::size_t n, std::size_t threads,
                                         std::size_t candidates_per_cluster) {
  using namespace bounded_linkage_detail;
  const std::size_t k = std::max<std::size_t>(1, candidates_per_cluster);
  // Per cluster: its list (k + 1 candidates reserved), its heap entry and slot records.
  const std::size_t per_cluster = sizeof(CandidateList) + (k + 1) * sizeof(Candidate) + 48;
  // Per thread and partner: a row's slots, heights and candidates, and the row kernel's means
  // and square roots.
  const std::size_t per_partner = 2 * sizeof(std::size_t) + 2 * sizeof(double) + sizeof(Candidate);
  return n * per_cluster + std::max<std::size_t>(threads, 1) * n * per_partner;
}

template <typename Score, typename Merge>
MergeTree bounded_linkage(std::size_t n, const Score& score, std::size_t candidates_per_cluster,
                          const Merge& merge) {
  using namespace bounded_linkage_detail;
  const std::size_t k = std::max<std::size_t>(1, candidates_per_cluster);
  MergeTree tree;
  tree.leaf_count = n;
  if (n < 2) return tree;
  tree.merges.reserve(n - 1);

  std::vector<std::size_t> node_of_slot(n), slot_of_node(2 * n - 1);
  std::vector<char> node_alive(2 * n - 1, 0);
  std::vector<std::size_t> live(n);  // live slots, ascending
  for (std::size_t i = 0; i < n; ++i) {
    node_of_slot[i] = slot_of_node[i] = live[i] = i;
    node_alive[i] = 1;
  }
  std::vector<CandidateList> lists(n);
  IndexedMinHeap heap(n);

  // Scores of slot i against the live slots live[begin, end) but i, as candidates in the
  // buffers' row (one batched row: the same values as score(i, j) pair by pair).
  auto score_partners = [&](std::size_t i, std::size_t begin, std::size_t end,
                            RowBuffers& buffers) {
    buffers.slots.clear();
    for (std::size_t p = begin; p < end; ++p)
      if (live[p] != i) buffers.slots.push_back(live[p]);
    buffers.heights.resize(buffers.slots.size());
    score.row(i, buffers.slots.data(), buffers.slots.size(), buffers.heights.data());
    buffers.row.clear();
    for (std::size_t r = 0; r < buffers.slots.size(); ++r) {
      const std::size_t slot = buffers.slots[r];
      buffers.row.push_back({buffers.heights[r], slot, node_of_slot[slot]});
    }
  };
  // Leaves the k + 1 first of `candidates` in Candidate order at its front, sorted; returns
  // how many that is (fewer when there are fewer candidates).
  auto select_best = [&](std::vector<Candidate>& candidates) {
    const std::size_t kept = std::min(k + 1, candidates.size());
    std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(kept),
                      candidates.end());
    return kept;
  };
  // A list from the k + 1 first candidates in order (`best`, sorted, maybe fewer): the k first,
  // the next as the threshold.
  auto fill_list = [&](CandidateList& list, const Candidate* best, std::size_t count) {
    const std::size_t kept = std::min(k, count);
    // Room for the k + 1 that offer() briefly holds: a list never reallocates after this
    // (lists filled on worker threads would otherwise be freed and regrown across malloc's
    // per-thread arenas, ~90 MB more peak memory at 100 000 points).
    list.best.reserve(k + 1);
    list.best.assign(best, best + kept);
    list.threshold = count > k ? best[k] : kNoCandidate;
  };
  auto key_heap = [&](std::size_t i) {
    if (lists[i].best.empty()) {
      heap.remove(i);
    } else {
      heap.set(i, lists[i].best.front().score);
    }
  };
  // Offers a new partner to i's list, keeping the invariant; where it becomes the head, i's
  // heap key is due (recorded in `keys`, for the caller to set in order).
  auto offer = [&](std::size_t i, Candidate c, std::vector<std::pair<std::size_t, double>>& keys) {
    CandidateList& list = lists[i];
    if (!(c < list.threshold)) return;
    list.best.insert(std::upper_bound(list.best.begin(), list.best.end(), c), c);
    if (list.best.size() > k) {
      list.threshold = std::min(list.threshold, list.best.back());
      list.best.pop_back();
    }
    if (list.best.front().node == c.node) keys.emplace_back(i, c.score);
  };

  // Rebuilds slot i's list from its row; with `offer_as` (the node i now holds), first offers
  // i to every partner's list. A long row runs in pieces on the run's threads: each scores its
  // share of the partners, makes the offers to them (disjoint lists) and keeps its k + 1 best;
  // the heap keys due are then set in partner order and the pieces' best merged, so the lists,
  // the heap and the tree are those of one pass in partner order, whatever the thread count.
  struct Piece {
    std::vector<Candidate> best;                       // its k + 1 best, sorted
    std::vector<std::pair<std::size_t, double>> keys;  // heap keys due, in partner order
  };
  std::vector<Piece> pieces;
  std::vector<Candidate> merged_best;
  constexpr std::size_t kNoOffer = std::numeric_limits<std::size_t>::max();
  auto rebuild_row = [&](std::size_t i, std::size_t offer_as) {
    const std::size_t count = live.size();
    // Per partner: its score, the candidate, the offer's test and the selection's.
    const std::size_t work = score.pair_work() + 16;
    const std::size_t threads = loop_thread_count();
    // One piece per thread: the partners cost the same, and at 20 000 points 2 threads cost
    // -2.8 % CPU time against 1 with one piece per thread, +1.0 % with two and +4.8 % with
    // four (bench/RESULTS.md, twenty-third session).
    std::size_t piece_count = 1;
    if (threads > 1 && count * work >= kMinLoopWork)
      piece_count = std::min(threads, std::max<std::size_t>(1, count * work / kMinTaskWork));
    if (pieces.size() < piece_count) pieces.resize(piece_count);
    parallel_for_range(0, piece_count, [&](const auto& range) {
      RowBuffers& buffers = thread_row_buffers();
      for (std::size_t q = range.begin(); q < range.end(); ++q) {
        Piece& piece = pieces[q];
        score_partners(i, count * q / piece_count, count * (q + 1) / piece_count, buffers);
        piece.keys.clear();
        if (offer_as != kNoOffer)
          for (const Candidate& c : buffers.row) offer(c.slot, {c.score, i, offer_as}, piece.keys);
        const std::size_t kept = select_best(buffers.row);
        piece.best.assign(buffers.row.begin(),
                          buffers.row.begin() + static_cast<std::ptrdiff_t>(kept));
      }
    });
    merged_best.clear();
    for (std::size_t q = 0; q < piece_count; ++q) {
      for (const auto& [slot, key] : pieces[q].keys) heap.set(slot, key);
      merged_best.insert(merged_best.end(), pieces[q].best.begin(), pieces[q].best.end());
    }
    fill_list(lists[i], merged_best.data(), select_best(merged_best));
    key_heap(i);
  };

  // Every slot's list, from the n(n-1)/2 pair scores (the largest part of the run), each
  // scored once: the slots in blocks of kTileSlots, and every pair of blocks as one tile
  // (Rate1PairScore::rows, the same heights as row() bit for bit, and score(i, j) = score(j, i)),
  // whose scores are offered to both blocks' rows. Each row keeps its k + 1 best as they come
  // (sorted, in Candidate order: a total order, so the k + 1 smallest and their order do not
  // depend on the order of the offers, and equal what a partial sort of the whole row gives).
  // The tiles run round by round on the run's threads, the rounds pairing the blocks as a
  // round-robin tournament does, so that no two tiles of a round share a block and each row is
  // written by one task at a time. The heap is keyed afterwards, in slot order.
  {
    const std::size_t blocks = (n + kTileSlots - 1) / kTileSlots;
    auto block_begin = [&](std::size_t b) { return b * kTileSlots; };
    auto block_end = [&](std::size_t b) { return std::min(n, (b + 1) * kTileSlots); };
    // A full list takes a better offer in place of its last: never more than the k + 1 it
    // reserved, as an insert before the pop would (every list then reallocated on a worker
    // thread, in that thread's malloc arena: at 100 000 points 227 MiB peak instead of 159).
    auto offer_initial = [&](std::size_t i, const Candidate& c) {
      std::vector<Candidate>& best = lists[i].best;
      if (best.size() < k + 1) {
        best.insert(std::upper_bound(best.begin(), best.end(), c), c);
        return;
      }
      if (!(c < best.back())) return;
      const auto at = std::upper_bound(best.begin(), best.end() - 1, c);
      std::move_backward(at, best.end() - 1, best.end());
      *at = c;
    };
    for (std::size_t i = 0; i < n; ++i) lists[i].best.reserve(k + 1);
    // Scores block a against block b (a <= b; within one block, the pairs above the diagonal)
    // and offers them to both.
    auto score_tile = [&](std::size_t a, std::size_t b) {
      thread_local std::vector<double> tile;
      const std::size_t a0 = block_begin(a), a1 = block_end(a);
      const std::size_t b0 = block_begin(b), b1 = block_end(b);
      const std::size_t rows = a1 - a0, columns = b1 - b0;
      tile.resize(rows * columns);
      std::size_t slots[kTileSlots];
      double* out[kTileSlots];
      for (std::size_t r = 0; r < rows; ++r) {
        slots[r] = a0 + r;
        out[r] = tile.data() + r * columns;
      }
      if constexpr (RowsScore<const Score>) {
        score.rows(slots, rows, live.data() + b0, columns, out);
      } else {
        // Row by row; in a block's own tile only the pairs above the diagonal.
        for (std::size_t r = 0; r < rows; ++r) {
          const std::size_t skip = a == b ? r + 1 : 0;
          score.row(slots[r], live.data() + b0 + skip, columns - skip, out[r] + skip);
        }
      }
      for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t i = a0 + r;
        for (std::size_t c = 0; c < columns; ++c) {
          const std::size_t j = b0 + c;
          if (a == b && j <= i) continue;
          const double height = tile[r * columns + c];
          offer_initial(i, {height, j, node_of_slot[j]});
          offer_initial(j, {height, i, node_of_slot[i]});
        }
      }
    };
    // Round-robin pairing (the circle method) of positions 0 .. m - 1, m even: in round t,
    // position p meets position m - 1 - p, where position 0 holds block 0 and the others hold
    // the remaining blocks rotated by t; over the m - 1 rounds every two positions meet once.
    // With an odd block count, position m - 1 = `blocks` is an idle block, and a block paired
    // with it scores its own tile that round; with an even count, the blocks' own tiles come
    // first, all at once (no two share a block either).
    const std::size_t m = blocks + (blocks % 2);
    auto block_at = [&](std::size_t position, std::size_t round) {
      return position == 0 ? std::size_t{0} : 1 + (position - 1 + round) % (m - 1);
    };
    const std::size_t tile_work = score.pair_work() * kTileSlots * kTileSlots;
    auto score_tiles = [&](const std::vector<std::pair<std::size_t, std::size_t>>& tiles) {
      parallel_for_work(0, tiles.size(), tile_work, [&](const auto& range) {
        for (std::size_t t = range.begin(); t < range.end(); ++t)
          score_tile(tiles[t].first, tiles[t].second);
      });
    };
    std::vector<std::pair<std::size_t, std::size_t>> tiles;
    if (blocks % 2 == 0) {
      for (std::size_t b = 0; b < blocks; ++b) tiles.emplace_back(b, b);
      score_tiles(tiles);
    }
    for (std::size_t round = 0; round + 1 < m; ++round) {
      tiles.clear();
      for (std::size_t p = 0; p < m / 2; ++p) {
        const std::size_t x = block_at(p, round), y = block_at(m - 1 - p, round);
        const std::size_t low = std::min(x, y), high = std::max(x, y);
        tiles.emplace_back(low, high < blocks ? high : low);
      }
      score_tiles(tiles);
    }
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<Candidate>& best = lists[i].best;
      lists[i].threshold = best.size() > k ? best[k] : kNoCandidate;
      if (best.size() > k) best.pop_back();
    }
  }
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
        rebuild_row(a, kNoOffer);
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
    // The merged cluster takes the lower slot, as in the full-cache path.
    const std::size_t low = std::min(a, b), high = std::max(a, b);
    merge(low, high, merge_height);
    const std::size_t left = node_of_slot[low], right = node_of_slot[high];
    tree.merges.push_back({std::min(left, right), std::max(left, right), merge_height});
    current_height = merge_height;
    node_alive[left] = node_alive[right] = 0;
    const std::size_t merged = n + step;
    node_alive[merged] = 1;
    node_of_slot[low] = merged;
    slot_of_node[merged] = low;
    live.erase(std::lower_bound(live.begin(), live.end(), high));
    heap.remove(high);
    lists[high] = CandidateList{};

    rebuild_row(low, merged);
  }
  return tree;
}

}  // namespace kingman::detail
