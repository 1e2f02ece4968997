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

// `pair_work`: rough arithmetic per pair (parallel_for.hpp). `score_pair` is called from several
// threads at once. `rows` is scratch, reused across steps.
template <typename ScorePair>
PairChoice best_live_pair(const std::vector<std::size_t>& live, std::size_t pair_work,
                          const ScorePair& score_pair, std::vector<RowBest>& rows) {
  const std::size_t m = live.size();
  rows.resize(m);
  parallel_for_work(
      0, m - 1, pair_work * (m / 2 + 1),
      [&](const auto& range) {
        for (std::size_t x = range.begin(); x < range.end(); ++x) {
          RowBest best;
          for (std::size_t y = x + 1; y < m; ++y) {
            const ScoredPair scored = score_pair(live[x], live[y]);
            if (scored.score < best.score || (x == 0 && y == 1)) {
              best.score = scored.score;
              best.choice = {live[x], live[y], std::max(scored.duration, 0.0)};
              best.taken = true;
            }
          }
          rows[x] = best;
        }
      },
      kRowTasksPerThread);
  RowBest best = rows[0];
  for (std::size_t x = 1; x + 1 < m; ++x)
    if (rows[x].taken && rows[x].score < best.score) best = rows[x];
  return best.choice;
}

}  // namespace kingman::detail
