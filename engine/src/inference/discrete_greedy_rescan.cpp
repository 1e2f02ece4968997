// Greedy-MinDuration and Greedy-MaxProb for the binary / multinomial likelihood. The rate
// lambda_m changes every step, so every live pair is rescored every step: O(n^3) pair scores.
// With one mutation rate MinDuration rescores only the rows that can hold the step's choice
// (row_duration_bounds.hpp): the same tree, in about O(n^2) pair scores.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "../scheduler/parallel_for.hpp"
#include "best_live_pair.hpp"
#include "greedy_rescan_paths.hpp"
#include "kingman/error.hpp"
#include "kingman/inference/discrete_greedy.hpp"
#include "kingman/inference/discrete_merge_time.hpp"
#include "kingman/inference/greedy.hpp"
#include "kingman/model/coalescent_prior.hpp"
#include "kingman/model/discrete_messages.hpp"
#include "pair_storage_choice.hpp"
#include "row_bound_step.hpp"

namespace kingman {

MergeTree greedy_rescan(const DiscreteData& data, Algorithm algorithm) {
  return detail::greedy_rescan(data, algorithm, detail::RescanPath::automatic);
}

namespace detail {

namespace {

// No cluster made yet (the first step).
constexpr std::size_t kNoSlot = std::numeric_limits<std::size_t>::max();

// Slots i and j as a pair, in this thread's storage (reused across pairs).
const DiscretePair& pair_of(const DiscreteMessages& messages, std::size_t i, std::size_t j) {
  thread_local DiscretePair pair;
  pair.assign(messages, i, j);
  return pair;
}

// A pair's unclamped duration at the step's rate and current time: negative when the pair's
// optimum lies after the current time.
double pair_duration(const DiscretePair& pair, double lambda, double current_time) {
  return current_time - optimal_merge_time(pair, lambda);
}

// Row x's first smallest duration (pairs (live[x], live[y]), y > x), the largest |t_l| + |t_r|
// over its pairs, and whether every duration was finite (row_bound_step.hpp).
RowMinimum row_minimum(const DiscreteMessages& messages, const std::vector<std::size_t>& live,
                       std::size_t x, double lambda, double current_time) {
  RowMinimum best;
  const double t_x = std::abs(messages.time(live[x]));
  for (std::size_t y = x + 1; y < live.size(); ++y) {
    const double duration =
        pair_duration(pair_of(messages, live[x], live[y]), lambda, current_time);
    best.finite = best.finite && std::isfinite(duration);
    best.offset_sum = std::max(best.offset_sum, t_x + std::abs(messages.time(live[y])));
    if (duration < best.duration) {
      best.duration = duration;
      best.index = y - x - 1;
    }
  }
  return best;
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
  std::optional<RowBoundState> row_state;
  if (by_bounds) row_state.emplace(n);
  std::size_t new_slot = kNoSlot;  // the slot of the cluster the last step made
  double current_time = 0.0;
  for (std::size_t step = 0; step + 1 < n; ++step) {
    const double lambda = coalescent_rate(live.size());
    std::optional<PairChoice> chosen;
    if (by_bounds) {
      auto row_minimum_of = [&](std::size_t x) {
        return row_minimum(messages, live, x, lambda, current_time);
      };
      auto add_column = [&](std::size_t at, const auto& add) {
        const double t_new = std::abs(messages.time(new_slot));
        bool finite = true;
        for (std::size_t x = 0; x < at; ++x) {
          const double duration =
              pair_duration(pair_of(messages, live[x], new_slot), lambda, current_time);
          finite = finite && std::isfinite(duration);
          add(x, duration, std::abs(messages.time(live[x])) + t_new,
              std::numeric_limits<double>::infinity());
        }
        return finite;
      };
      std::optional<std::size_t> new_position;
      if (new_slot != kNoSlot)
        new_position = static_cast<std::size_t>(
            std::lower_bound(live.begin(), live.end(), new_slot) - live.begin());
      // The rows under the bar on the threads: each pair is a merge-time search, so a batch's
      // work dwarfs a fork and join (~2 ms a step at 1 000 points).
      auto rows_on_threads = [&](std::span<const std::size_t> batch, std::span<RowMinimum> out) {
        std::size_t pairs = 0;
        for (const std::size_t x : batch) pairs += live.size() - x - 1;
        parallel_for_work(
            0, batch.size(), pair_work * (pairs / batch.size() + 1),
            [&](const auto& range) {
              for (std::size_t k = range.begin(); k < range.end(); ++k)
                out[k] = row_minimum_of(batch[k]);
            },
            kRowTasksPerThread);
      };
      chosen = choose_by_row_bounds(live, current_time, lambda, new_position, pair_work,
                                    LoopPlace::among_others, *row_state, row_minimum_of,
                                    rows_on_threads, add_column);
      by_bounds = chosen.has_value();  // else every pair from here on
    }
    if (!chosen) {
      auto score_pair = [&](std::size_t i, std::size_t j) {
        const DiscretePair& pair = pair_of(messages, i, j);
        const double duration = pair_duration(pair, lambda, current_time);
        double score = duration;
        if (algorithm == Algorithm::greedy_maxprob) {
          const double clamped = std::max(duration, 0.0);
          score = lambda * clamped - pair.log_local_likelihood(current_time - clamped);
        }
        return ScoredPair{score, duration};
      };
      chosen = best_live_pair(live, pair_work, score_pair, rows);
    }
    const PairChoice choice = *chosen;
    const double t = current_time - choice.duration;
    // The merged cluster takes the lower slot (choice.a < choice.b), as in the Brownian path.
    messages.merge(choice.a, choice.b, t, choice.a);
    tree.merges.push_back({std::min(node_id[choice.a], node_id[choice.b]),
                           std::max(node_id[choice.a], node_id[choice.b]),
                           0.0 - t});  // +0, never -0
    node_id[choice.a] = n + step;
    current_time = t;
    if (by_bounds)
      row_state->erase_row(static_cast<std::size_t>(
          std::lower_bound(live.begin(), live.end(), choice.b) - live.begin()));
    std::erase(live, choice.b);
    new_slot = choice.a;
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
