// Greedy-MinDuration and Greedy-MaxProb for the binary / multinomial likelihood. The rate
// lambda_m changes every step, so every live pair is rescored every step: O(n^3) pair scores.
#include <algorithm>
#include <limits>
#include <vector>

#include "../scheduler/parallel_for.hpp"
#include "best_live_pair.hpp"
#include "kingman/error.hpp"
#include "kingman/inference/discrete_greedy.hpp"
#include "kingman/inference/discrete_merge_time.hpp"
#include "kingman/inference/greedy.hpp"
#include "kingman/model/coalescent_prior.hpp"
#include "kingman/model/discrete_messages.hpp"
#include "pair_storage_choice.hpp"

namespace kingman {

MergeTree greedy_rescan(const DiscreteData& data, Algorithm algorithm) {
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

  std::vector<detail::RowBest> rows;
  // A pair's merge-time search: a few dozen evaluations over the columns.
  const std::size_t pair_work = 32 * (data.d + 1);
  double current_time = 0.0;
  for (std::size_t step = 0; step + 1 < n; ++step) {
    const double lambda = coalescent_rate(live.size());
    auto score_pair = [&](std::size_t i, std::size_t j) {
      thread_local DiscretePair pair;  // storage reused across pairs, one per thread
      pair.assign(messages, i, j);
      // Unclamped: negative when the pair's optimum lies after the current time.
      const double duration = current_time - optimal_merge_time(pair, lambda);
      double score = duration;
      if (algorithm == Algorithm::greedy_maxprob) {
        const double clamped = std::max(duration, 0.0);
        score = lambda * clamped - pair.log_local_likelihood(current_time - clamped);
      }
      return detail::ScoredPair{score, duration};
    };
    const detail::PairChoice choice = detail::best_live_pair(live, pair_work, score_pair, rows);
    const double t = current_time - choice.duration;
    messages.merge(choice.a, choice.b, t, choice.b);
    tree.merges.push_back({std::min(node_id[choice.a], node_id[choice.b]),
                           std::max(node_id[choice.a], node_id[choice.b]),
                           0.0 - t});  // +0, never -0
    node_id[choice.b] = n + step;
    current_time = t;
    std::erase(live, choice.a);
  }
  return tree;
}

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
