#pragma once
// Rows of a rescanning greedy's mode durations rescored together without the pair cache
// (row_bound_step.hpp's row_minima; Greedy-MinDuration and MGreedy with scalar messages,
// greedy_rescan.cpp). Rows x_1 < ... < x_q pair with the live positions after them, so the
// partners after x_i serve rows 1 ... i: each block of partners is loaded and transposed once for
// all of them (kernels::squared_distances_in_order_shared) instead of once per row. Partners go
// in chunks that keep the rows' distances in cache, and the chunks run on the threads when the
// batch is large. Every value is the one-row path's, bit for bit: the same distances, the same
// durations, and a row's first minimum is the first of the chunks' first minima that is
// strictly smaller than the ones before.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include "../scheduler/parallel_for.hpp"
#include "kingman/kernels/mode_durations.hpp"
#include "kingman/kernels/pair_kernels.hpp"
#include "kingman/kernels/vector_math.hpp"
#include "row_bound_step.hpp"

namespace kingman::detail {

// What a pass over the pairs needs of the step: live position -> mean (mean_of(y)), the live
// slots' offsets by live position, and the mode's parameters.
struct ModeRowStep {
  std::size_t live_count = 0, d = 0;
  const double* live_offset = nullptr;
  double time = 0.0, lambda = 0.0, dims = 0.0;
  kernels::ModeScale scale = kernels::ModeScale::linear;
  std::size_t pair_work = 16;  // parallel_for.hpp's units per pair
};

// Partners per chunk.
inline constexpr std::size_t kModeRowChunk = 1024;

// A chunk's findings for one row (found: some duration below +inf), reduced in chunk order.
struct ModeChunkMinimum {
  std::size_t index = 0;  // in the row's partner list
  double duration = std::numeric_limits<double>::infinity();
  double offset_max = -std::numeric_limits<double>::infinity();
  bool found = false;
  double eps_min = std::numeric_limits<double>::infinity();  // the chunk's smallest eps
};

// Buffers of one thread's chunks, reused from chunk to chunk and step to step.
struct ModeChunkScratch {
  std::vector<double> distances, offsets;
  std::vector<double*> out_rows;
  std::vector<std::size_t> first;

  static ModeChunkScratch& of_this_thread() {
    thread_local ModeChunkScratch scratch;
    return scratch;
  }
};

// The smallest batch (parallel_for.hpp's units) whose chunks go to the threads: eight times the
// smallest loop worth splitting. A step's batch is one fork and join, ~11-30 us of CPU time on
// the 2-vCPU host, where a batch at 10 000 points (~37 000 pairs, 0.2 ms) split made 2 threads
// cost 15 % more CPU time than 1 for 25 % less wall time (bench/RESULTS.md, Engine: greedy,
// thirty-fifth session); from ~130 000 pairs a step (~1 ms) the fork is a few per cent.
inline constexpr std::size_t kModeRowsSplitWork = kMinLoopWork * 8;

// Rows per group: a group's distances for one chunk (256 KiB) stay in L2, and a batch of many
// rows (some steps' bounds leave thousands) holds one group's chunk findings at a time.
inline constexpr std::size_t kModeRowGroup = 32;

// out[k] = the RowMinimum of row rows[k] (increasing live positions), as greedy_rescan's
// row_minimum computes it one row at a time.
template <typename MeanOf>
void mode_row_minima(std::span<const std::size_t> rows, const ModeRowStep& step,
                     const MeanOf& mean_of, std::span<RowMinimum> out) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const std::size_t q = rows.size();
  if (q == 0) return;
  const std::size_t base = rows[0] + 1, m = step.live_count;  // partners: live positions >= base
  const std::size_t partners = m - base;
  const std::size_t chunks = (partners + kModeRowChunk - 1) / kModeRowChunk;
  std::vector<const double*> partner_means(partners), queries(kModeRowGroup);
  std::vector<std::size_t> first(kModeRowGroup);
  for (std::size_t y = base; y < m; ++y) partner_means[y - base] = mean_of(y);
  std::vector<ModeChunkMinimum> found;
  for (std::size_t g0 = 0; g0 < q; g0 += kModeRowGroup) {
    // Rows g0 .. g1 - 1 of the batch, as rows 0 .. group - 1 here.
    const std::size_t group = std::min(kModeRowGroup, q - g0);
    std::size_t pairs = 0;
    for (std::size_t k = 0; k < group; ++k) {
      queries[k] = mean_of(rows[g0 + k]);
      first[k] = rows[g0 + k] + 1 - base;
      pairs += partners - first[k];
    }
    const std::size_t first_chunk = first[0] / kModeRowChunk, group_chunks = chunks - first_chunk;
    found.assign(group_chunks * group, ModeChunkMinimum{});
    // Below kModeRowsSplitWork the group runs on the calling thread (declared as free work).
    const std::size_t work = step.pair_work * pairs;
    const std::size_t chunk_work = work >= kModeRowsSplitWork ? work / group_chunks + 1 : 0;
    parallel_for_work(
        first_chunk, chunks, chunk_work,
        [&](const auto& range) {
          ModeChunkScratch& scratch = ModeChunkScratch::of_this_thread();
          std::vector<double>& distances = scratch.distances;
          std::vector<double>& offsets = scratch.offsets;
          std::vector<double*>& out_rows = scratch.out_rows;
          std::vector<std::size_t>& chunk_first = scratch.first;
          for (std::size_t c = range.begin(); c < range.end(); ++c) {
            const std::size_t c0 = c * kModeRowChunk, c1 = std::min(partners, c0 + kModeRowChunk);
            std::size_t active = 0;  // rows with partners in this chunk: a prefix
            while (active < group && first[active] < c1) ++active;
            distances.resize(active * kModeRowChunk);
            offsets.resize(kModeRowChunk);
            out_rows.resize(active);
            chunk_first.resize(active);
            for (std::size_t k = 0; k < active; ++k) {
              chunk_first[k] = std::max(first[k], c0) - c0;
              out_rows[k] = distances.data() + k * kModeRowChunk;
            }
            kernels::squared_distances_in_order_shared(queries.data(), chunk_first.data(), active,
                                                       partner_means.data() + c0, c1 - c0, step.d,
                                                       out_rows.data());
            for (std::size_t k = 0; k < active; ++k) {
              const std::size_t from = c0 + chunk_first[k], count = c1 - from;
              double* eps = out_rows[k];
              const double offset_x = step.live_offset[rows[g0 + k]];
              const double* partner_offset = step.live_offset + base + from;
              for (std::size_t i = 0; i < count; ++i)
                offsets[i] = offset_x + partner_offset[i] - 2.0 * step.time;
              ModeChunkMinimum& mine = found[(c - first_chunk) * group + k];
              mine.offset_max = kernels::max_array(offsets.data(), count);
              const std::size_t nearest = kernels::first_minimum_below(eps, count, kInf);
              if (nearest < count) mine.eps_min = eps[nearest];
              kernels::mode_durations(step.scale, step.lambda, step.dims, eps, offsets.data(), eps,
                                      count);
              const std::size_t index = kernels::first_minimum_below(eps, count, kInf);
              if (index < count) {
                mine.found = true;
                mine.index = from - first[k] + index;
                mine.duration = eps[index];
              }
            }
          }
        },
        kUniformTasksPerThread);
    for (std::size_t k = 0; k < group; ++k) {
      RowMinimum row;
      row.index = partners - first[k];  // none below +inf: the row's length, as the scan returns
      row.finite = false;
      double offset_max = -kInf;
      for (std::size_t c = first[k] / kModeRowChunk; c < chunks; ++c) {
        const ModeChunkMinimum& chunk = found[(c - first_chunk) * group + k];
        offset_max = std::max(offset_max, chunk.offset_max);
        row.eps_min = std::min(row.eps_min, chunk.eps_min);
        if (chunk.found && (!row.finite || chunk.duration < row.duration)) {
          row.finite = true;
          row.index = chunk.index;
          row.duration = chunk.duration;
        }
      }
      row.offset_sum = offset_max + 2.0 * std::abs(step.time);
      out[g0 + k] = row;
    }
  }
}

}  // namespace kingman::detail
