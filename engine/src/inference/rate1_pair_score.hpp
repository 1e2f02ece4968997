#pragma once
// The Greedy-Rate1 pair score shared by both Rate1 paths (full pair cache, bounded memory).
#include <algorithm>
#include <cstddef>
#include <vector>

#include "kingman/kernels/mode_durations.hpp"
#include "kingman/kernels/pair_kernels.hpp"

#include "kingman/inference/merge_duration.hpp"
#include "kingman/model/brownian_messages.hpp"
#include "kingman/model/whitened_data.hpp"

namespace kingman::detail {

// Unclamped merge height of a pair under rate 1. The optimum merge time does not depend on
// the current time (MODEL.md section 4), so this is fixed once the pair exists.
class Rate1PairScore {
 public:
  Rate1PairScore(const WhitenedData& data, const BrownianMessages& messages)
      : data_(data), messages_(messages), dims_(static_cast<double>(data.d)) {}

  // Rough arithmetic per pair (generic_linkage.hpp): a distance and a square root; with
  // per-dimension offsets, about five evaluations of the search's sums.
  std::size_t pair_work() const {
    return messages_.per_dimension() ? 6 * (data_.d + 8) : data_.d + 8;
  }

  double operator()(std::size_t i, std::size_t j) const {
    if (!messages_.per_dimension()) {
      // The SIMD distance (eight interleaved partial sums), as row() takes it.
      const double eps = kernels::squared_distance(messages_.mean(i), messages_.mean(j), data_.d);
      // linear_mode_duration with offset a_i + a_j measured from time 0 gives -t_C.
      return linear_mode_duration(1.0, dims_, eps, messages_.offset(i) + messages_.offset(j));
    }
    thread_local ModeSearchInput shared;
    gather_mode_search_input(messages_.view(i), messages_.view(j), data_.d, 0.0, shared);
    return linear_mode_duration(1.0, shared);
  }

  // out[k] = (*this)(i, partners[k]) for k < count, bit for bit (the distance kernel's sum
  // order is fixed, and both the distance and the offset sum are symmetric in the pair), with
  // the distances of the row in one SIMD kernel call.
  void row(std::size_t i, const std::size_t* partners, std::size_t count, double* out) const {
    if (messages_.per_dimension()) {
      for (std::size_t k = 0; k < count; ++k) out[k] = (*this)(i, partners[k]);
      return;
    }
    thread_local std::vector<const double*> means;
    means.resize(count);
    for (std::size_t k = 0; k < count; ++k) means[k] = messages_.mean(partners[k]);
    kernels::squared_distances_to_rows(messages_.mean(i), means.data(), count, data_.d, out);
    heights_from_distances(i, partner_offsets(partners, count), count, out);
  }

  // out[q][k] = (*this)(slots[q], partners[k]) for q < slot_count and k < count: row() for
  // several slots at once, bit for bit. The partners are taken in chunks that stay in the
  // core's first-level cache while every slot's distances to them are computed, so each
  // partner's mean comes from memory once per call rather than once per slot (row by row, at
  // 10 000 x 100 the distances streamed the means at ~15 GB/s and took two thirds of the time).
  void rows(const std::size_t* slots, std::size_t slot_count, const std::size_t* partners,
            std::size_t count, double* const* out) const {
    if (messages_.per_dimension()) {
      for (std::size_t q = 0; q < slot_count; ++q) row(slots[q], partners, count, out[q]);
      return;
    }
    thread_local std::vector<const double*> means;
    means.resize(count);
    for (std::size_t k = 0; k < count; ++k) means[k] = messages_.mean(partners[k]);
    const std::size_t chunk = partners_per_chunk();
    for (std::size_t begin = 0; begin < count; begin += chunk) {
      const std::size_t size = std::min(chunk, count - begin);
      for (std::size_t q = 0; q < slot_count; ++q) {
        kernels::squared_distances_to_rows(messages_.mean(slots[q]), means.data() + begin, size,
                                           data_.d, out[q] + begin);
      }
    }
    const double* offsets = partner_offsets(partners, count);
    for (std::size_t q = 0; q < slot_count; ++q)
      heights_from_distances(slots[q], offsets, count, out[q]);
  }

 private:
  // Partners per chunk of rows(): their means in about 24 KiB (half of a first-level data
  // cache), a multiple of the distance kernel's four rows at a time.
  std::size_t partners_per_chunk() const {
    constexpr std::size_t kChunkBytes = std::size_t{24} << 10;
    const std::size_t fit = kChunkBytes / (sizeof(double) * std::max<std::size_t>(data_.d, 1));
    return std::max<std::size_t>(4, fit / 4 * 4);
  }

  // The partners' offsets side by side (a thread-local buffer, valid until the next call).
  const double* partner_offsets(const std::size_t* partners, std::size_t count) const {
    thread_local std::vector<double> offsets;
    offsets.resize(count);
    for (std::size_t k = 0; k < count; ++k) offsets[k] = messages_.offset(partners[k]);
    return offsets.data();
  }

  // Turns out[k], the squared distance of slot i and the partner whose offset is
  // partner_offset[k], into the pair's height: linear_mode_duration(1, d, eps, a_i + a_j) over
  // the row by kernels::mode_durations, which computes it in SIMD with the same bits (square
  // roots and divisions eight at a time in the AVX-512 copy; this header is compiled for the
  // baseline, where a division loop ran two at a time).
  void heights_from_distances(std::size_t i, const double* partner_offset, std::size_t count,
                              double* out) const {
    thread_local std::vector<double> offsets;
    offsets.resize(count);
    const double offset = messages_.offset(i);
    for (std::size_t k = 0; k < count; ++k) offsets[k] = offset + partner_offset[k];
    kernels::mode_durations(kernels::ModeScale::linear, 1.0, dims_, out, offsets.data(), out,
                            count);
  }

  const WhitenedData& data_;
  const BrownianMessages& messages_;
  double dims_;
};

}  // namespace kingman::detail
