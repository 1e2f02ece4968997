// Greedy-MinDuration, Greedy-MaxProb and MGreedy (MODEL.md section 4). The rate lambda_m and
// the current time change every step, so every live pair is rescored every step: O(n^3) time.
// Squared distances are cached per pair (scalar messages) and refreshed only for the new
// cluster.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include "../memory/large_array.hpp"
#include "../scheduler/parallel_for.hpp"
#include "best_live_pair.hpp"
#include "condensed_index.hpp"
#include "maxprob_row.hpp"
#include "pair_storage_choice.hpp"

#include "kingman/error.hpp"
#include "kingman/inference/greedy.hpp"
#include "kingman/inference/merge_duration.hpp"
#include "kingman/kernels/mode_durations.hpp"
#include "kingman/memory_budget.hpp"
#include "kingman/model/brownian_messages.hpp"
#include "kingman/model/coalescent_prior.hpp"

namespace kingman {

MergeTree greedy_rescan(const WhitenedData& data, double leaf_variance, Algorithm algorithm) {
  if (algorithm != Algorithm::greedy_minduration && algorithm != Algorithm::greedy_maxprob &&
      algorithm != Algorithm::mgreedy) {
    throw OptionError("greedy_rescan: " + to_string(algorithm) + " is not a rescanning greedy");
  }
  const std::size_t n = data.n;
  const double dims = static_cast<double>(data.d);
  MergeTree tree;
  tree.leaf_count = n;
  if (n < 2) return tree;
  tree.merges.reserve(n - 1);

  BrownianMessages messages(data, leaf_variance);
  const bool per_dimension = messages.per_dimension();
  detail::LargeArray<double> eps;  // cached squared distances (scalar messages only)
  if (!per_dimension) {
    eps = detail::LargeArray<double>(n * (n - 1) / 2);  // every entry written below
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j)
        eps[detail::condensed_index(n, i, j)] = messages.squared_distance(i, j);
  }
  std::vector<std::size_t> live(n), node_id(n);
  for (std::size_t i = 0; i < n; ++i) live[i] = node_id[i] = i;

  std::vector<detail::RowBest> rows;
  std::vector<double> live_offset;  // scalar messages: offset of live[y], per step
  // Rough arithmetic per pair (parallel_for.hpp): a row's pairs in SIMD cost about a third of
  // what one pair at a time did (48).
  const std::size_t pair_work = per_dimension ? 6 * (data.d + 8) : 16;
  double current_time = 0.0;
  for (std::size_t step = 0; step + 1 < n; ++step) {
    const double lambda = coalescent_rate(live.size());
    const auto scale =
        algorithm == Algorithm::mgreedy ? kernels::ModeScale::log : kernels::ModeScale::linear;
    detail::PairChoice choice;
    if (!per_dimension) {
      // The live slots' offsets side by side, so that a row reads its partners' in order.
      live_offset.resize(live.size());
      for (std::size_t y = 0; y < live.size(); ++y) live_offset[y] = messages.offset(live[y]);
      // A row's pairs together: their distances and offsets gathered, then their durations in
      // one vectorized call (mode_durations.hpp, or with MaxProb's score bounds), the same bits
      // as one pair at a time.
      auto gather_row = [&](std::size_t x, std::vector<double>& row_eps,
                            std::vector<double>& row_offset) {
        const std::size_t i = live[x], count = live.size() - x - 1;
        const std::size_t* partners = live.data() + x + 1;
        const double* row = &eps[detail::condensed_index(n, i, i + 1)];  // row[j - i - 1]
        row_eps.resize(count);
        row_offset.resize(count);
        const double offset_i = live_offset[x];
        const double* partner_offset = live_offset.data() + x + 1;
        for (std::size_t k = 0; k < count; ++k) {
          row_eps[k] = row[partners[k] - i - 1];
          row_offset[k] = offset_i + partner_offset[k] - 2.0 * current_time;
        }
      };
      if (algorithm == Algorithm::greedy_maxprob) {
        // Only the pairs that can be a row's minimum scored exactly (maxprob_row.hpp).
        auto row_best = [&](std::size_t x) {
          thread_local std::vector<double> row_eps, row_offset;
          gather_row(x, row_eps, row_offset);
          const detail::MaxProbRowMinimum least = detail::maxprob_row_minimum(
              lambda, dims, row_eps.data(), row_offset.data(), row_eps.size(), x == 0);
          detail::RowBest best;
          if (least.index < row_eps.size()) {
            best.score = least.score;
            best.choice = {live[x], live[x + 1 + least.index], least.duration};
            best.taken = true;
          }
          return best;
        };
        choice = detail::best_live_pair_by_row_minima(live, pair_work, row_best, rows);
      } else {
        auto score_row = [&](std::size_t x, double* scores, double* durations) {
          thread_local std::vector<double> row_eps, row_offset;
          gather_row(x, row_eps, row_offset);
          kernels::mode_durations(scale, lambda, dims, row_eps.data(), row_offset.data(), durations,
                                  row_eps.size());
          std::copy(durations, durations + row_eps.size(), scores);
        };
        choice = detail::best_live_pair_by_rows(live, pair_work, score_row, rows);
      }
    } else {
      auto score_pair = [&](std::size_t i, std::size_t j) {
        thread_local ModeSearchInput shared;
        gather_mode_search_input(messages.view(i), messages.view(j), data.d, current_time, shared);
        double duration = algorithm == Algorithm::mgreedy ? log_mode_duration(lambda, shared)
                                                          : linear_mode_duration(lambda, shared);
        double score = duration;
        if (algorithm == Algorithm::greedy_maxprob) {
          duration = std::max(duration, 0.0);
          score = lambda * duration - log_local_likelihood(messages.view(i), messages.view(j),
                                                           data.d, current_time - duration,
                                                           data.log_lambda_diagonal);
        }
        return detail::ScoredPair{score, duration};
      };
      choice = detail::best_live_pair(live, pair_work, score_pair, rows);
    }
    const double t = current_time - choice.duration;
    messages.merge(choice.a, choice.b, t, choice.b);
    tree.merges.push_back({std::min(node_id[choice.a], node_id[choice.b]),
                           std::max(node_id[choice.a], node_id[choice.b]),
                           0.0 - t});  // +0, never -0 (a merge at time 0 printed as "-0")
    node_id[choice.b] = n + step;
    current_time = t;
    std::erase(live, choice.a);
    if (!per_dimension) {
      // The new cluster's distances (scattered writes into the pair cache), in parallel too.
      detail::parallel_for_work(
          0, live.size(), data.d + 16,
          [&](const auto& range) {
            for (std::size_t x = range.begin(); x < range.end(); ++x) {
              const std::size_t j = live[x];
              if (j == choice.b) continue;
              const std::size_t lo = std::min(j, choice.b), hi = std::max(j, choice.b);
              eps[detail::condensed_index(n, lo, hi)] = messages.squared_distance(lo, hi);
            }
          },
          detail::kUniformTasksPerThread);
    }
  }
  return tree;
}

namespace {

// The data and the per-cluster state (a few n*d and n arrays), which every path holds.
double base_bytes_of(std::size_t n, std::size_t d) {
  return 3.0 * static_cast<double>(n) * static_cast<double>(d) * sizeof(double) +
         64.0 * static_cast<double>(n);
}

}  // namespace

std::size_t greedy_pair_cache_bytes(std::size_t n, std::size_t d) {
  return static_cast<std::size_t>(detail::pair_cache_bytes(n) + base_bytes_of(n, d));
}

bool greedy_rate1_prefers_bounded(std::size_t n, std::size_t d, std::size_t threads) {
  std::size_t from = kBoundedPathTiers[0].from_points;
  for (const BoundedPathTier& tier : kBoundedPathTiers)
    if (threads >= tier.from_threads) from = tier.from_points;
  // n >= from * max(1, d / reference), without rounding d / reference.
  return static_cast<double>(n) * static_cast<double>(kBoundedReferenceDims) >=
         static_cast<double>(from) * static_cast<double>(std::max(d, kBoundedReferenceDims));
}

PairStorage greedy_rate1_storage(std::size_t n, std::size_t d, std::size_t threads,
                                 std::size_t memory_budget, PairStorage requested,
                                 std::size_t cores) {
  const std::size_t running = cores > 0 ? std::min(threads, cores) : threads;
  const double base = base_bytes_of(n, d);
  const detail::PairStorageNeeds needs{
      detail::pair_cache_bytes(n) + base,
      base + static_cast<double>(greedy_rate1_bounded_bytes(n, threads))};
  return detail::choose_pair_storage(n, needs, memory_budget, requested,
                                     greedy_rate1_prefers_bounded(n, d, running));
}

void check_pair_storage(Algorithm algorithm, PairStorage storage) {
  if (storage == PairStorage::bounded && is_greedy(algorithm) &&
      algorithm != Algorithm::greedy_rate1) {
    throw OptionError("--pair-storage bounded: " + to_string(algorithm) +
                      " rescores every live pair at every step; only "
                      "greedy-rate1 has a bounded path");
  }
}

MergeTree run_greedy(const WhitenedData& data, double leaf_variance, Algorithm algorithm,
                     std::size_t memory_budget, PairStorage storage, PairStorage* used) {
  const std::size_t threads = detail::loop_thread_count();
  if (algorithm == Algorithm::greedy_rate1) {
    const PairStorage chosen = greedy_rate1_storage(data.n, data.d, threads, memory_budget, storage,
                                                    detail::machine_thread_count());
    if (used) *used = chosen;
    return chosen == PairStorage::full ? greedy_rate1(data, leaf_variance)
                                       : greedy_rate1_bounded(data, leaf_variance);
  }
  check_pair_storage(algorithm, storage);
  const double cache_bytes = detail::pair_cache_bytes(data.n);
  const double base_bytes = base_bytes_of(data.n, data.d);
  if (cache_bytes + base_bytes > static_cast<double>(memory_budget)) {
    const double bounded_bytes =
        base_bytes + static_cast<double>(greedy_rate1_bounded_bytes(data.n, threads));
    // The largest n whose pair cache fits: n^2/2 * 8 bytes <= budget.
    const double largest_n = std::floor(std::sqrt(2.0 * static_cast<double>(memory_budget) / 8.0));
    throw ResourceError(to_string(algorithm) + " on " + std::to_string(data.n) + " points needs " +
                        format_bytes(cache_bytes + base_bytes) +
                        " for its pair cache, more than the memory budget (--max-memory) of " +
                        format_bytes(static_cast<double>(memory_budget)) + "; about " +
                        fmt::format("{:.0f}", largest_n) +
                        " points would fit. greedy-rate1 runs without a pair cache in about " +
                        format_bytes(bounded_bytes));
  }
  if (used) *used = PairStorage::full;
  return greedy_rescan(data, leaf_variance, algorithm);
}

}  // namespace kingman
