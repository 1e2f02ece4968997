#pragma once
// One step of the rescanning greedy algorithms (Greedy-MinDuration, Greedy-MaxProb, MGreedy;
// Brownian and discrete): every live pair scored, the first pair in (slot, slot) order with the
// smallest score chosen. The rows of the live list run on the run's threads
// (parallel_for.hpp), each keeping its first minimum; the rows' minima are joined in row order,
// so the choice is the one a single thread scanning all pairs makes, whatever the split. As on
// one thread, the very first pair is taken whatever its score (a NaN then wins), and after it
// only a strictly smaller score.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "../scheduler/parallel_for.hpp"
#include "kingman/kernels/vector_math.hpp"

namespace kingman::detail {

struct PairChoice {
  std::size_t a = 0, b = 0;
  double duration = 0.0;  // clamped duration of the chosen merge
};

// What score_pair(i, j) returns: the pair's score (minimized) and its merge duration.
struct ScoredPair {
  double score, duration;
};

// Tasks per thread for a step's rows, which shrink along the list: a few more than for items of
// equal cost.
inline constexpr std::size_t kRowTasksPerThread = 8;

// A row's first minimum.
struct RowBest {
  PairChoice choice;
  double score = std::numeric_limits<double>::infinity();
  bool taken = false;
};

// `pair_work`: rough arithmetic per pair (parallel_for.hpp). row_best(x) returns row x's first
// minimum over the pairs (live[x], live[y]), y > x, by the rules above (in row 0 the first pair
// whatever its score, unless a later one is smaller; elsewhere the first of the smallest scores
// below +inf, none if there is none); it is called from several threads at once. `rows` is
// scratch, reused across steps.
template <typename RowBestOf>
PairChoice best_live_pair_by_row_minima(const std::vector<std::size_t>& live, std::size_t pair_work,
                                        const RowBestOf& row_best, std::vector<RowBest>& rows) {
  const std::size_t m = live.size();
  rows.resize(m);
  parallel_for_work(
      0, m - 1, pair_work * (m / 2 + 1),
      [&](const auto& range) {
        for (std::size_t x = range.begin(); x < range.end(); ++x) rows[x] = row_best(x);
      },
      kRowTasksPerThread);
  RowBest best = rows[0];
  for (std::size_t x = 1; x + 1 < m; ++x)
    if (rows[x].taken && rows[x].score < best.score) best = rows[x];
  return best.choice;
}

// The same from every pair's score: score_row(x, scores, durations) fills scores[k] and
// durations[k] for the pair (live[x], live[x + 1 + k]), k < m - x - 1 (m live slots).
template <typename ScoreRow>
PairChoice best_live_pair_by_rows(const std::vector<std::size_t>& live, std::size_t pair_work,
                                  const ScoreRow& score_row, std::vector<RowBest>& rows) {
  const std::size_t m = live.size();
  return best_live_pair_by_row_minima(
      live, pair_work,
      [&](std::size_t x) {
        thread_local std::vector<double> scores, durations;
        const std::size_t count = m - x - 1;
        scores.resize(count);
        durations.resize(count);
        score_row(x, scores.data(), durations.data());
        // The row's first minimum (kernels::first_minimum_below): in row 0 the first pair
        // whatever its score, unless a later one is smaller.
        std::size_t k;
        if (x == 0) {
          const std::size_t later =
              kernels::first_minimum_below(scores.data() + 1, count - 1, scores[0]);
          k = later < count - 1 ? later + 1 : 0;
        } else {
          k = kernels::first_minimum_below(scores.data(), count,
                                           std::numeric_limits<double>::infinity());
        }
        RowBest best;
        if (k < count) {
          best.score = scores[k];
          best.choice = {live[x], live[x + 1 + k], std::max(durations[k], 0.0)};
          best.taken = true;
        }
        return best;
      },
      rows);
}

// The same with the pairs scored one at a time: score_pair(i, j) for live slots i < j.
template <typename ScorePair>
PairChoice best_live_pair(const std::vector<std::size_t>& live, std::size_t pair_work,
                          const ScorePair& score_pair, std::vector<RowBest>& rows) {
  return best_live_pair_by_rows(
      live, pair_work,
      [&](std::size_t x, double* scores, double* durations) {
        for (std::size_t y = x + 1; y < live.size(); ++y) {
          const ScoredPair scored = score_pair(live[x], live[y]);
          scores[y - x - 1] = scored.score;
          durations[y - x - 1] = scored.duration;
        }
      },
      rows);
}

}  // namespace kingman::detail
