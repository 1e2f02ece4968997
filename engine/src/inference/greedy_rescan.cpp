// Greedy-MinDuration, Greedy-MaxProb and MGreedy (MODEL.md section 4). The rate lambda_m and
// the current time change every step, so every live pair is rescored every step: O(n^3) time.
// Squared distances are cached per pair (scalar messages) and refreshed only for the new
// cluster. On complete data MinDuration and MGreedy rescore only the rows that can hold the
// step's choice (row_duration_bounds.hpp): the same tree, in about O(n^2) time.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include <fmt/format.h>
#include "../memory/large_array.hpp"
#include "../scheduler/parallel_for.hpp"
#include "best_live_pair.hpp"
#include "condensed_index.hpp"
#include "greedy_rescan_paths.hpp"
#include "maxprob_row.hpp"
#include "mode_row_minima.hpp"
#include "pair_storage_choice.hpp"
#include "row_bound_step.hpp"

#include "kingman/error.hpp"
#include "kingman/inference/greedy.hpp"
#include "kingman/inference/merge_duration.hpp"
#include "kingman/kernels/mode_durations.hpp"
#include "kingman/kernels/pair_kernels.hpp"
#include "kingman/memory_budget.hpp"
#include "kingman/model/brownian_messages.hpp"
#include "kingman/model/coalescent_prior.hpp"

namespace kingman {

MergeTree greedy_rescan(const WhitenedData& data, double leaf_variance, Algorithm algorithm) {
  return detail::greedy_rescan(data, leaf_variance, algorithm, detail::RescanPath::automatic);
}

namespace detail {

bool rescan_by_row_bounds(const WhitenedData& data, Algorithm algorithm) {
  if (data.has_missing || data.n < 2 ||
      (algorithm != Algorithm::greedy_minduration && algorithm != Algorithm::mgreedy))
    return false;
  // An upper bound on every squared distance, leaves' or merged clusters' (whose means are
  // weighted means of their leaves', within each column's range): lambda eps must stay far
  // below overflow in the modes' square roots.
  double bound = 0.0;
  for (std::size_t j = 0; j < data.d; ++j) {
    double least = std::numeric_limits<double>::infinity(), most = -least;
    for (std::size_t i = 0; i < data.n; ++i) {
      least = std::min(least, data.x[i * data.d + j]);
      most = std::max(most, data.x[i * data.d + j]);
    }
    bound += (most - least) * (most - least);
  }
  return std::isfinite(bound) && bound * coalescent_rate(data.n) < 1e298;
}

MergeTree greedy_rescan(const WhitenedData& data, double leaf_variance, Algorithm algorithm,
                        RescanPath path, bool pair_cache) {
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
  // Rows rescored only where they can hold the choice (row_duration_bounds.hpp): complete data,
  // the two algorithms whose score is the mode duration, and no overflow in the modes' square
  // roots (rescan_by_row_bounds), so that every duration is finite and follows the bounds.
  // Without `pair_cache` those rows' distances are computed as they are needed (the same bits),
  // and the run keeps no n^2 / 2 cache: O(n d) memory, for about twice the time. The every-pair
  // path always caches them.
  bool by_bounds = path == RescanPath::automatic && rescan_by_row_bounds(data, algorithm);
  if (by_bounds) {
    double offsets = 0.0;
    for (std::size_t i = 0; i < n; ++i) offsets += std::abs(messages.offset(i));
    by_bounds = std::isfinite(offsets);
  }
  const bool cached = !per_dimension && (!by_bounds || pair_cache);
  // With row bounds (and fewer than 2^18 points, below) the cache's fill and the first step are
  // the run's only loops that may split: they start the workers only if large
  // (LoopPlace::alone).
  const LoopPlace early_place =
      by_bounds && n < kMinLoopWork ? LoopPlace::alone : LoopPlace::among_others;
  detail::LargeArray<double> eps;  // cached squared distances (scalar messages only)
  if (cached) {
    eps = detail::LargeArray<double>(n * (n - 1) / 2);  // every entry written below
    // Rows on the threads (their lengths fall along the list: more tasks than for equal items).
    detail::parallel_for_work(
        0, n, (data.d + 2) * (n / 2 + 1),
        [&](const auto& range) {
          // messages.squared_distance's sums, eight partners at a time (the same bits).
          thread_local std::vector<const double*> partners;
          for (std::size_t i = range.begin(); i < range.end() && i + 1 < n; ++i) {
            partners.resize(n - i - 1);
            for (std::size_t j = i + 1; j < n; ++j) partners[j - i - 1] = messages.mean(j);
            kernels::squared_distances_in_order(messages.mean(i), partners.data(), n - i - 1,
                                                data.d, &eps[detail::condensed_index(n, i, i + 1)]);
          }
        },
        detail::kRowTasksPerThread, early_place);
  }
  std::optional<RowBoundState> row_state;
  if (by_bounds) {
    row_state.emplace(n);
    row_state->bounds.follow_rate(
        algorithm == Algorithm::mgreedy ? kernels::ModeScale::log : kernels::ModeScale::linear,
        dims);
  }
  std::size_t new_slot = n;  // the slot of the cluster the last step made (n: none yet)
  std::vector<std::size_t> live(n), node_id(n);
  for (std::size_t i = 0; i < n; ++i) live[i] = node_id[i] = i;

  std::vector<detail::RowBest> rows;
  std::vector<double> new_eps;      // the last merged cluster's distances, by live position
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
        row_eps.resize(count);
        row_offset.resize(count);
        if (cached) {
          const double* row = &eps[detail::condensed_index(n, i, i + 1)];  // row[j - i - 1]
          for (std::size_t k = 0; k < count; ++k) row_eps[k] = row[partners[k] - i - 1];
        } else if (i == new_slot) {
          // The new cluster's row: its distances from the last merge (the same bits).
          std::copy(new_eps.begin() + static_cast<std::ptrdiff_t>(x + 1), new_eps.end(),
                    row_eps.begin());
        } else {
          // The cache's values, computed here (the same kernel, the same bits).
          thread_local std::vector<const double*> partner_means;
          partner_means.resize(count);
          for (std::size_t k = 0; k < count; ++k) partner_means[k] = messages.mean(partners[k]);
          kernels::squared_distances_in_order(messages.mean(i), partner_means.data(), count, data.d,
                                              row_eps.data());
        }
        const double offset_i = live_offset[x];
        const double* partner_offset = live_offset.data() + x + 1;
        for (std::size_t k = 0; k < count; ++k)
          row_offset[k] = offset_i + partner_offset[k] - 2.0 * current_time;
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
        std::optional<PairChoice> chosen;
        if (by_bounds) {
          // Row x's durations (the every-pair path's scores, bit for bit) and its first
          // minimum; the row's largest a_l + a_r is at most max r + 2 |T| (r = a_l + a_r - 2 T
          // >= 0).
          auto row_minimum = [&](std::size_t x) {
            thread_local std::vector<double> row_eps, row_offset, durations;
            gather_row(x, row_eps, row_offset);
            const std::size_t count = row_eps.size();
            durations.resize(count);
            // The row's smallest squared distance, for floors that follow the rate.
            const std::size_t nearest = kernels::first_minimum_below(
                row_eps.data(), count, std::numeric_limits<double>::infinity());
            kernels::mode_durations(scale, lambda, dims, row_eps.data(), row_offset.data(),
                                    durations.data(), count);
            RowMinimum found;
            if (nearest < count) found.eps_min = row_eps[nearest];
            found.index = kernels::first_minimum_below(durations.data(), count,
                                                       std::numeric_limits<double>::infinity());
            found.finite = found.index < count;  // else nothing finite below +inf
            if (found.finite) found.duration = durations[found.index];
            found.offset_sum =
                kernels::max_array(row_offset.data(), count) + 2.0 * std::abs(current_time);
            return found;
          };
          // The new cluster's column: its distances from the last merge (new_eps, by live
          // position), their durations in one call.
          auto add_column = [&](std::size_t at, const auto& add) {
            thread_local std::vector<double> column_offset, column_durations;
            column_offset.resize(at);
            column_durations.resize(at);
            const double new_offset = messages.offset(new_slot);
            for (std::size_t x = 0; x < at; ++x)
              column_offset[x] = live_offset[x] + new_offset - 2.0 * current_time;
            kernels::mode_durations(scale, lambda, dims, new_eps.data(), column_offset.data(),
                                    column_durations.data(), at);
            bool finite = true;
            for (std::size_t x = 0; x < at; ++x) {
              finite = finite && std::isfinite(column_durations[x]);
              add(x, column_durations[x], column_offset[x] + 2.0 * std::abs(current_time),
                  new_eps[x]);
            }
            return finite;
          };
          std::optional<std::size_t> new_position;
          if (new_slot != n)
            new_position = static_cast<std::size_t>(
                std::lower_bound(live.begin(), live.end(), new_slot) - live.begin());
          // Without the cache, the rows rescored together share their partners' loads
          // (mode_row_minima.hpp); with it, each row gathers its own cached distances.
          const ModeRowStep row_step{live.size(), data.d, live_offset.data(), current_time, lambda,
                                     dims,        scale,  pair_work};
          auto rows_together = [&](std::span<const std::size_t> batch,
                                   std::span<RowMinimum> minima) {
            mode_row_minima(
                batch, row_step, [&](std::size_t y) { return messages.mean(live[y]); }, minima);
          };
          auto rows_one_by_one = one_row_at_a_time(row_minimum);
          chosen = cached ? choose_by_row_bounds(live, current_time, lambda, new_position,
                                                 pair_work, early_place, *row_state, row_minimum,
                                                 rows_one_by_one, add_column)
                          : choose_by_row_bounds(live, current_time, lambda, new_position,
                                                 pair_work, early_place, *row_state, row_minimum,
                                                 rows_together, add_column);
          by_bounds = chosen.has_value();  // else every pair from here on
        }
        if (!chosen) {
          auto score_row = [&](std::size_t x, double* scores, double* durations) {
            thread_local std::vector<double> row_eps, row_offset;
            gather_row(x, row_eps, row_offset);
            kernels::mode_durations(scale, lambda, dims, row_eps.data(), row_offset.data(),
                                    durations, row_eps.size());
            std::copy(durations, durations + row_eps.size(), scores);
          };
          chosen = detail::best_live_pair_by_rows(live, pair_work, score_row, rows);
        }
        choice = *chosen;
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
    // The merged cluster takes the lower slot (choice.a < choice.b), as in Greedy-Rate1's
    // linkages: its pairs with the slots below it are a column of the pair cache (a cache line
    // per write), a third of its partners on average rather than two thirds.
    messages.merge(choice.a, choice.b, t, choice.a);
    // A merge of two clusters of variance 0 at their own time (identical points without leaf
    // variance, which fit() refuses) makes the new variance 0/0: durations with it are NaN,
    // which the bounds do not cover. Every pair is rescored from then on, as without bounds.
    if (by_bounds && !std::isfinite(messages.offset(choice.a))) by_bounds = false;
    tree.merges.push_back({std::min(node_id[choice.a], node_id[choice.b]),
                           std::max(node_id[choice.a], node_id[choice.b]),
                           0.0 - t});  // +0, never -0 (a merge at time 0 printed as "-0")
    node_id[choice.a] = n + step;
    current_time = t;
    if (by_bounds)
      row_state->erase_row(static_cast<std::size_t>(
          std::lower_bound(live.begin(), live.end(), choice.b) - live.begin()));
    std::erase(live, choice.b);
    new_slot = choice.a;
    if (!per_dimension) {
      // The new cluster's distances to every live slot by live position (messages'
      // squared_distance bits: a square is the same either way round), kept for the next
      // step's column, and written into the pair cache if there is one (scattered writes), on
      // the threads. With row bounds a step is short (a few rows), and a fork and join per
      // step would cost more CPU time than it saves (+12 % on 2 threads at 10 000 points): the
      // loop declares one unit per item there, and splits only beyond 2^18 partners.
      new_eps.resize(live.size());
      detail::parallel_for_work(
          0, live.size(), by_bounds ? 0 : data.d + 16,
          [&](const auto& range) {
            thread_local std::vector<const double*> partners;
            partners.resize(range.size());
            for (std::size_t x = range.begin(); x < range.end(); ++x)
              partners[x - range.begin()] = messages.mean(live[x]);
            kernels::squared_distances_in_order(messages.mean(new_slot), partners.data(),
                                                range.size(), data.d, &new_eps[range.begin()]);
            if (!cached) return;
            for (std::size_t x = range.begin(); x < range.end(); ++x) {
              const std::size_t j = live[x];
              if (j == new_slot) continue;
              const std::size_t lo = std::min(j, new_slot), hi = std::max(j, new_slot);
              eps[detail::condensed_index(n, lo, hi)] = new_eps[x];
            }
          },
          detail::kUniformTasksPerThread);
    }
  }
  return tree;
}

}  // namespace detail

namespace {

// The data and the per-cluster state (a few n*d and n arrays, among them the rescanning
// greedies' row bounds and the new cluster's distances), which every path holds.
double base_bytes_of(std::size_t n, std::size_t d) {
  return 3.0 * static_cast<double>(n) * static_cast<double>(d) * sizeof(double) +
         112.0 * static_cast<double>(n);
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
  if (storage == PairStorage::bounded && algorithm == Algorithm::greedy_maxprob) {
    throw OptionError(
        "--pair-storage bounded: greedy-maxprob rescores every live pair at every "
        "step and keeps their distances; greedy-rate1, greedy-minduration and "
        "mgreedy have bounded paths");
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
  const double base_bytes = base_bytes_of(data.n, data.d);
  const double cache_bytes = detail::pair_cache_bytes(data.n);
  // MinDuration and MGreedy on complete data rescore rows by bounds, with the pair cache (full;
  // auto where it fits the budget) or without it (bounded: O(n d) memory, about twice the
  // time). The same tree either way.
  if (detail::rescan_by_row_bounds(data, algorithm)) {
    const bool fits = cache_bytes + base_bytes <= static_cast<double>(memory_budget);
    const bool keep_cache =
        storage == PairStorage::full || (storage == PairStorage::automatic && fits);
    if (keep_cache && !fits) {
      throw ResourceError(to_string(algorithm) + " on " + std::to_string(data.n) +
                          " points needs " + format_bytes(cache_bytes + base_bytes) +
                          " for its pair cache (--pair-storage full), more than the memory "
                          "budget (--max-memory) of " +
                          format_bytes(static_cast<double>(memory_budget)) +
                          "; --pair-storage bounded needs " + format_bytes(base_bytes));
    }
    if (!keep_cache && base_bytes > static_cast<double>(memory_budget)) {
      throw ResourceError(to_string(algorithm) + " on " + std::to_string(data.n) +
                          " points needs " + format_bytes(base_bytes) +
                          " for its data and messages, more than the memory budget "
                          "(--max-memory) of " +
                          format_bytes(static_cast<double>(memory_budget)));
    }
    if (used) *used = keep_cache ? PairStorage::full : PairStorage::bounded;
    return detail::greedy_rescan(data, leaf_variance, algorithm, detail::RescanPath::automatic,
                                 keep_cache);
  }
  if (storage == PairStorage::bounded) {
    throw OptionError("--pair-storage bounded: " + to_string(algorithm) +
                      " keeps no pair cache only on complete data (this table has missing "
                      "entries, or distances too large for its bounds)");
  }
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
  return detail::greedy_rescan(data, leaf_variance, algorithm, detail::RescanPath::automatic);
}

}  // namespace kingman
