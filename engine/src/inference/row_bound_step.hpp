#pragma once
// One step of a rescanning greedy by row bounds (row_duration_bounds.hpp), for any model whose
// durations minus the current time never decrease: the Brownian modes (greedy_rescan.cpp) and
// the binary / multinomial optimum with one mutation rate (discrete_greedy_rescan.cpp). The
// model supplies a row's exact first minimum and the new cluster's column; this keeps the
// bounds and picks the rows to rescore, so that the choice is the every-pair path's.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "../scheduler/parallel_for.hpp"
#include "best_live_pair.hpp"
#include "kingman/kernels/vector_math.hpp"
#include "row_duration_bounds.hpp"

namespace kingman::detail {

// Row x's first smallest unclamped duration over its pairs (live[x], live[x + 1 + index]), the
// largest |a_l + a_r| (Brownian) or |t_l| + |t_r| (discrete) over them, an upper bound will do,
// and whether every duration of the row was finite.
struct RowMinimum {
  std::size_t index = 0;
  double duration = std::numeric_limits<double>::infinity(), offset_sum = 0.0;
  bool finite = true;
  double eps_min = std::numeric_limits<double>::infinity();  // the row's smallest eps (+inf: none)
};

// The bounds' state between steps: by slot, and each live row's base by live position (erased
// with the live slot it belongs to, erase_row).
struct RowBoundState {
  explicit RowBoundState(std::size_t slots)
      : bounds(slots), live_base(slots, std::numeric_limits<double>::infinity()) {}
  void erase_row(std::size_t position) {
    live_base.erase(live_base.begin() + static_cast<std::ptrdiff_t>(position));
  }
  RowDurationBounds bounds;
  std::vector<double> live_base;
  std::vector<char> evaluated;                        // by live position, this step
  std::vector<std::size_t> batch;                     // rows rescored together, this step
  std::vector<RowMinimum> batch_minima;               // theirs
  std::vector<std::pair<double, std::size_t>> order;  // (floor part, row), floors that follow
};

// row_minima for a model that rescores rows one at a time: row_minimum(x) for each.
template <typename RowMinimumOf>
auto one_row_at_a_time(const RowMinimumOf& row_minimum) {
  return [&row_minimum](std::span<const std::size_t> rows, std::span<RowMinimum> out) {
    for (std::size_t k = 0; k < rows.size(); ++k) out[k] = row_minimum(rows[k]);
  };
}

// The step's choice at current time `time`. `new_position`: the live position of the cluster
// the last step made, or nullopt at the first step, which rescores every row on the threads
// (pair_work per pair, LoopPlace `first_place`). row_minimum(x) -> RowMinimum is called from
// several threads at once there. add_column(at, add) calls add(x, duration, offset_sum, eps) for
// each pair (live[x], new cluster), x < at, with eps its squared distance (+inf where the bounds
// do not follow the rate), and returns whether every duration was finite. `lambda`: the step's
// rate.
// row_minima(rows, out) sets out[k] = row_minimum(rows[k]) for rows in increasing order, by
// whatever means share their work. Returns nothing where a duration was not finite: the
// every-pair rules for NaN then apply.
template <typename RowMinimumOf, typename RowMinimaOf, typename AddColumn>
std::optional<PairChoice> choose_by_row_bounds(
    const std::vector<std::size_t>& live, double time, double lambda,
    std::optional<std::size_t> new_position, std::size_t pair_work, LoopPlace first_place,
    RowBoundState& state, const RowMinimumOf& row_minimum, const RowMinimaOf& row_minima,
    const AddColumn& add_column) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  RowDurationBounds& bounds = state.bounds;
  std::vector<double>& live_base = state.live_base;
  const std::size_t m = live.size();
  state.evaluated.assign(m, 0);
  RowMinimum best;
  std::size_t best_row = m;
  bool finite = true;
  // The every-pair path's join: a row replaces the best only with a smaller duration, and rows
  // are met in order; here they are met out of order, so an equal duration in an earlier row
  // replaces it too.
  auto consider = [&](std::size_t x, const RowMinimum& found) {
    state.evaluated[x] = 1;
    finite = finite && found.finite;
    bounds.clear(live[x]);
    bounds.add(live[x], found.duration, found.offset_sum, time, found.eps_min, lambda);
    live_base[x] = bounds.base(live[x], lambda);
    if (found.duration < best.duration || (found.duration == best.duration && x < best_row)) {
      best = found;
      best_row = x;
    }
  };
  if (!new_position) {
    std::vector<RowMinimum> all(m - 1);
    parallel_for_work(
        0, m - 1, pair_work * (m / 2 + 1),
        [&](const auto& range) {
          for (std::size_t x = range.begin(); x < range.end(); ++x) all[x] = row_minimum(x);
        },
        kRowTasksPerThread, first_place);
    for (std::size_t x = 0; x + 1 < m; ++x) consider(x, all[x]);
  } else {
    // The new cluster's pairs: its own row, and its column, (x, new) for the earlier rows x,
    // whose bounds take them in.
    const std::size_t at = *new_position;
    // Floors that follow the rate rose since the bases were set: every live row's, anew.
    if (bounds.follows_rate() && m > 1) bounds.bases(live.data(), m - 1, lambda, live_base.data());
    if (at + 1 < m) consider(at, row_minimum(at));
    finite = add_column(at,
                        [&](std::size_t x, double duration, double offset_sum, double eps) {
                          bounds.add(live[x], duration, offset_sum, time, eps, lambda);
                          live_base[x] = bounds.base(live[x], lambda);
                        }) &&
             finite;
    if (!finite) return std::nullopt;
    // Then every row whose floor (RowDurationBounds::floor) is at most the best duration so
    // far, the best only falling, so a row skipped stays out. First the unevaluated row of
    // lowest base, the likeliest to hold the step's choice (where the new cluster's row is
    // empty, whatever its floor): its duration lowers the bar for all the others. At 10 000
    // points this rescored 367 M pairs where taking rows in live order rescored 579 M
    // (bench/RESULTS.md, Engine: greedy, thirty-fifth session).
    const std::size_t rows_with_pairs = m - 1;
    auto below_best = [&](std::size_t x) {
      return RowDurationBounds::floor(bounds.floor_part(live[x], time, lambda), best.duration) <=
             best.duration;
    };
    {
      // The new cluster's row is the only one evaluated so far: its base is set aside.
      const bool hide = at < rows_with_pairs;
      const double at_base = hide ? live_base[at] : kInf;
      if (hide) live_base[at] = kInf;
      const std::size_t lowest =
          kernels::first_minimum_below(live_base.data(), rows_with_pairs, kInf);
      if (hide) live_base[at] = at_base;
      if (lowest < rows_with_pairs && (best_row == m || below_best(lowest)))
        consider(lowest, row_minimum(lowest));
    }
    // The others under that bar, found by their bases against a threshold a little above what
    // the exact test needs, then tested exactly, and rescored together (row_minima).
    const double above = (best.duration - time) + 1e-9 * (std::abs(best.duration) + std::abs(time));
    state.batch.clear();
    for (std::size_t x = kernels::first_at_most(live_base.data(), rows_with_pairs, above);
         x < rows_with_pairs; x += 1 + kernels::first_at_most(live_base.data() + x + 1,
                                                              rows_with_pairs - x - 1, above)) {
      if (!state.evaluated[x] && below_best(x)) state.batch.push_back(x);
    }
    if (bounds.follows_rate()) {
      // Floors that follow the rate are tight: the rows in the order of their floors, one at a
      // time, until the next floor is above the best (at 10 000 points 0.75 rows a step beside
      // the new cluster's and the lowest, where the whole batch held 12).
      state.order.clear();
      for (const std::size_t x : state.batch)
        state.order.emplace_back(bounds.floor_part(live[x], time, lambda), x);
      std::sort(state.order.begin(), state.order.end());
      state.batch_minima.resize(1);
      for (const auto& [floor_part, x] : state.order) {
        if (!below_best(x)) break;
        row_minima(std::span<const std::size_t>(&x, 1), std::span<RowMinimum>(state.batch_minima));
        consider(x, state.batch_minima[0]);
      }
      state.batch.clear();
    }
    if (!state.batch.empty()) {
      state.batch_minima.resize(state.batch.size());
      row_minima(std::span<const std::size_t>(state.batch),
                 std::span<RowMinimum>(state.batch_minima));
      for (std::size_t k = 0; k < state.batch.size(); ++k)
        consider(state.batch[k], state.batch_minima[k]);
    }
  }
  if (!finite) return std::nullopt;
  if (best_row == m) throw std::logic_error("greedy_rescan: no pair chosen");
  return PairChoice{live[best_row], live[best_row + 1 + best.index], std::max(best.duration, 0.0)};
}

}  // namespace kingman::detail
