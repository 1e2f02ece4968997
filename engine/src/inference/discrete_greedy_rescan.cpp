// Greedy-MinDuration and Greedy-MaxProb for the binary / multinomial likelihood. The rate
// lambda_m changes every step, so every live pair is rescored every step: O(n^3) pair scores.
// With one mutation rate MinDuration rescores only the rows that can hold the step's choice
// (row_duration_bounds.hpp): the same tree, in about O(n^2) pair scores.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include "../scheduler/parallel_for.hpp"
#include "best_live_pair.hpp"
#include "greedy_rescan_paths.hpp"
#include "kingman/error.hpp"
#include "kingman/inference/discrete_greedy.hpp"
#include "kingman/inference/discrete_merge_time.hpp"
#include "kingman/inference/greedy.hpp"
#include "kingman/kernels/vector_math.hpp"
#include "kingman/model/coalescent_prior.hpp"
#include "kingman/model/discrete_messages.hpp"
#include "pair_storage_choice.hpp"
#include "row_duration_bounds.hpp"

namespace kingman {

MergeTree greedy_rescan(const DiscreteData& data, Algorithm algorithm) {
  return detail::greedy_rescan(data, algorithm, detail::RescanPath::automatic);
}

namespace detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A pair's unclamped duration at the step's rate and current time: negative when the pair's
// optimum lies after the current time.
double pair_duration(const DiscreteMessages& messages, std::size_t i, std::size_t j, double lambda,
                     double current_time) {
  thread_local DiscretePair pair;  // storage reused across pairs, one per thread
  pair.assign(messages, i, j);
  return current_time - optimal_merge_time(pair, lambda);
}

// Row x's first smallest duration (pairs (live[x], live[y]), y > x), the largest |t_l| + |t_r|
// over its pairs, and whether every duration was finite.
struct RowMinimum {
  std::size_t index = 0;
  double duration = kInf, offset_sum = 0.0;
  bool finite = true;
};

RowMinimum row_minimum(const DiscreteMessages& messages, const std::vector<std::size_t>& live,
                       std::size_t x, double lambda, double current_time) {
  RowMinimum best;
  const double t_x = std::abs(messages.time(live[x]));
  for (std::size_t y = x + 1; y < live.size(); ++y) {
    const double duration = pair_duration(messages, live[x], live[y], lambda, current_time);
    best.finite = best.finite && std::isfinite(duration);
    best.offset_sum = std::max(best.offset_sum, t_x + std::abs(messages.time(live[y])));
    if (duration < best.duration) {
      best.duration = duration;
      best.index = y - x - 1;
    }
  }
  return best;
}

// No cluster made yet (the first step).
constexpr std::size_t kNoSlot = std::numeric_limits<std::size_t>::max();

// The step's choice by row bounds (the Brownian version's steps, greedy_rescan.cpp), or nothing
// where a duration is not finite (the every-pair rules for NaN then apply).
std::optional<PairChoice> choose_by_bounds(const DiscreteMessages& messages,
                                           const std::vector<std::size_t>& live, double lambda,
                                           double current_time, std::size_t new_slot,
                                           std::size_t pair_work, RowDurationBounds& bounds,
                                           std::vector<double>& live_base,
                                           std::vector<char>& evaluated) {
  const std::size_t m = live.size();
  evaluated.assign(m, 0);
  RowMinimum best;
  std::size_t best_row = m;
  bool finite = true;
  auto consider = [&](std::size_t x, const RowMinimum& found) {
    evaluated[x] = 1;
    finite = finite && found.finite;
    bounds.clear(live[x]);
    bounds.add(live[x], found.duration, found.offset_sum, current_time);
    live_base[x] = bounds.base(live[x]);
    if (found.duration < best.duration || (found.duration == best.duration && x < best_row)) {
      best = found;
      best_row = x;
    }
  };
  if (new_slot == kNoSlot) {
    // The first step: every row, on the threads (as the every-pair path splits them).
    std::vector<RowMinimum> all(m - 1);
    parallel_for_work(
        0, m - 1, pair_work * (m / 2 + 1),
        [&](const auto& range) {
          for (std::size_t x = range.begin(); x < range.end(); ++x)
            all[x] = row_minimum(messages, live, x, lambda, current_time);
        },
        kRowTasksPerThread);
    for (std::size_t x = 0; x + 1 < m; ++x) consider(x, all[x]);
  } else {
    // The new cluster's row, then its column (x, new) for the earlier rows x.
    const std::size_t at = static_cast<std::size_t>(
        std::lower_bound(live.begin(), live.end(), new_slot) - live.begin());
    if (at + 1 < m) consider(at, row_minimum(messages, live, at, lambda, current_time));
    const double t_new = std::abs(messages.time(new_slot));
    for (std::size_t x = 0; x < at; ++x) {
      const double duration = pair_duration(messages, live[x], new_slot, lambda, current_time);
      finite = finite && std::isfinite(duration);
      bounds.add(live[x], duration, std::abs(messages.time(live[x])) + t_new, current_time);
      live_base[x] = bounds.base(live[x]);
    }
    if (!finite) return std::nullopt;
    // Then every row whose floor can reach the best duration so far (greedy_rescan.cpp).
    const std::size_t rows_with_pairs = m - 1;
    if (best_row == m) {
      const std::size_t lowest =
          kernels::first_minimum_below(live_base.data(), rows_with_pairs, kInf);
      if (lowest < rows_with_pairs && !evaluated[lowest])
        consider(lowest, row_minimum(messages, live, lowest, lambda, current_time));
    }
    auto threshold = [&] {
      const double scale = std::abs(best.duration) + std::abs(current_time);
      return (best.duration - current_time) + 1e-9 * scale;
    };
    double above = threshold();
    for (std::size_t x = kernels::first_at_most(live_base.data(), rows_with_pairs, above);
         x < rows_with_pairs; x += 1 + kernels::first_at_most(live_base.data() + x + 1,
                                                              rows_with_pairs - x - 1, above)) {
      if (evaluated[x]) continue;
      const double floor =
          RowDurationBounds::floor(bounds.floor_part(live[x], current_time), best.duration);
      if (floor > best.duration) continue;
      consider(x, row_minimum(messages, live, x, lambda, current_time));
      above = threshold();
    }
  }
  if (!finite) return std::nullopt;
  if (best_row == m) throw std::logic_error("greedy_rescan: no pair chosen");
  return PairChoice{live[best_row], live[best_row + 1 + best.index], std::max(best.duration, 0.0)};
}

}  // namespace

MergeTree greedy_rescan(const DiscreteData& data, Algorithm algorithm, RescanPath path) {
  if (algorithm != Algorithm::greedy_minduration && algorithm != Algorithm::greedy_maxprob) {
    throw OptionError("greedy_rescan: " + to_string(algorithm) +
                      " is not a rescanning greedy for discrete data");
  }
  const std::size_t n = data.n;
  MergeTree tree;
  tree.leaf_count = n;
  if (n < 2) return tree;
  tree.merges.reserve(n - 1);

  DiscreteMessages messages(data);
  std::vector<std::size_t> live(n), node_id(n);
  for (std::size_t i = 0; i < n; ++i) live[i] = node_id[i] = i;

  std::vector<RowBest> rows;
  // A pair's merge-time search: a few dozen evaluations over the columns.
  const std::size_t pair_work = 32 * (data.d + 1);
  // Row bounds (row_duration_bounds.hpp) for MinDuration with one mutation rate. A pair's
  // optimal merge time t*(lambda) = min(latest time, the root of a unimodal objective's slope,
  // discrete_merge_time.cpp) does not depend on the current time T and falls with the rate, so
  // its duration T - t* minus T never decreases; the search stops within 4 ulps of its
  // coordinate, far inside the bounds' slacks. Per-column rates take a search that is not
  // proven unimodal: every pair is rescored there.
  const std::vector<double>& rates = data.mutation_rate;
  bool by_bounds =
      algorithm == Algorithm::greedy_minduration && path == RescanPath::automatic &&
      !rates.empty() && std::isfinite(rates.front()) &&
      std::all_of(rates.begin(), rates.end(), [&](double r) { return r == rates.front(); });
  RowDurationBounds bounds(by_bounds ? n : 0);
  // RowDurationBounds::base of each live row, by live position.
  std::vector<double> live_base(by_bounds ? n : 0, kInf);
  std::vector<char> evaluated;
  std::size_t new_slot = kNoSlot;  // the slot of the cluster the last step made
  double current_time = 0.0;
  for (std::size_t step = 0; step + 1 < n; ++step) {
    const double lambda = coalescent_rate(live.size());
    std::optional<PairChoice> chosen;
    if (by_bounds) {
      chosen = choose_by_bounds(messages, live, lambda, current_time, new_slot, pair_work, bounds,
                                live_base, evaluated);
      by_bounds = chosen.has_value();  // else every pair from here on
    }
    if (!chosen) {
      auto score_pair = [&](std::size_t i, std::size_t j) {
        const double duration = pair_duration(messages, i, j, lambda, current_time);
        double score = duration;
        if (algorithm == Algorithm::greedy_maxprob) {
          thread_local DiscretePair pair;
          pair.assign(messages, i, j);
          const double clamped = std::max(duration, 0.0);
          score = lambda * clamped - pair.log_local_likelihood(current_time - clamped);
        }
        return ScoredPair{score, duration};
      };
      chosen = best_live_pair(live, pair_work, score_pair, rows);
    }
    const PairChoice choice = *chosen;
    const double t = current_time - choice.duration;
    messages.merge(choice.a, choice.b, t, choice.b);
    tree.merges.push_back({std::min(node_id[choice.a], node_id[choice.b]),
                           std::max(node_id[choice.a], node_id[choice.b]),
                           0.0 - t});  // +0, never -0
    node_id[choice.b] = n + step;
    current_time = t;
    if (by_bounds) {
      const std::size_t erased = static_cast<std::size_t>(
          std::lower_bound(live.begin(), live.end(), choice.a) - live.begin());
      live_base.erase(live_base.begin() + static_cast<std::ptrdiff_t>(erased));
    }
    std::erase(live, choice.a);
    new_slot = choice.b;
  }
  return tree;
}

}  // namespace detail

namespace {

// The data's messages (d K doubles and d flags per slot) and the per-slot records every path
// keeps.
double base_bytes_of(const DiscreteData& data) {
  const double n = static_cast<double>(data.n), d = static_cast<double>(data.d);
  return n * d * (8.0 * static_cast<double>(data.categories) + 1.0) + 128.0 * n;
}

}  // namespace

PairStorage greedy_rate1_storage(const DiscreteData& data, std::size_t threads,
                                 std::size_t memory_budget, PairStorage requested) {
  const double base = base_bytes_of(data);
  const detail::PairStorageNeeds needs{
      detail::pair_cache_bytes(data.n) + base,
      base + static_cast<double>(greedy_rate1_bounded_bytes(data.n, threads))};
  // A discrete pair's score is a merge-time search over the columns: the bounded path's
  // rescored rows cost more than reading the cache, so it runs only where the cache does not
  // fit.
  return detail::choose_pair_storage(data.n, needs, memory_budget, requested, false);
}

MergeTree run_greedy(const DiscreteData& data, Algorithm algorithm, std::size_t memory_budget,
                     PairStorage storage, PairStorage* used) {
  switch (algorithm) {
    case Algorithm::greedy_rate1: {
      const PairStorage chosen =
          greedy_rate1_storage(data, detail::loop_thread_count(), memory_budget, storage);
      if (used) *used = chosen;
      return chosen == PairStorage::full ? greedy_rate1(data) : greedy_rate1_bounded(data);
    }
    case Algorithm::greedy_minduration:
    case Algorithm::greedy_maxprob: {
      check_pair_storage(algorithm, storage);
      // No pair cache: each step rescores the live pairs row by row.
      const double need = base_bytes_of(data);
      if (need > static_cast<double>(memory_budget)) {
        throw ResourceError(to_string(algorithm) + " on " + std::to_string(data.n) +
                            " points needs " + format_bytes(need) +
                            " for its messages, more than the memory budget (--max-memory) of " +
                            format_bytes(static_cast<double>(memory_budget)));
      }
      return greedy_rescan(data, algorithm);
    }
    case Algorithm::mgreedy:
      throw OptionError(
          "algorithm mgreedy uses the Brownian model's log-scale merge-time mode and has no "
          "binary/multinomial version; use greedy-rate1, greedy-minduration or greedy-maxprob");
    default:
      throw OptionError("run_greedy: " + to_string(algorithm) + " is not a greedy algorithm");
  }
}

}  // namespace kingman
