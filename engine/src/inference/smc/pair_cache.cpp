#include "pair_cache.hpp"
#include "../../scheduler/parallel_for.hpp"
#include "kingman/kernels/pair_kernels.hpp"
#include "kingman/kernels/vector_math.hpp"
#include "live_particle_state.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace kingman::detail {

LeafPairCache::LeafPairCache(const WhitenedData& data, LeafPairs contents, Mpost2RowSums row_sums)
    : n_(data.n), dims_(data.d), shape_(1.0 - 0.5 * static_cast<double>(data.d)) {
  if (contents == LeafPairs::on_demand) return;
  const bool with_bessel_terms = contents == LeafPairs::mpost2_weights;
  const std::size_t d = data.d;
  eps_ = LargeArray<double>(n_ * (n_ - 1) / 2);
  // Row i (the pairs (i, j < i)) against the contiguous block of earlier points, by the SIMD
  // difference form: exact to (d + 3) ulps, and faster here than the blocked product form of
  // PairDistanceTiles in the portable build (bench/RESULTS.md, Kernels). Rows are independent,
  // so the parallel split cannot change any value.
  parallel_for_range(0, n_, [&](const auto& rows) {
    for (std::size_t i = rows.begin(); i != rows.end(); ++i) {
      kernels::squared_distances_to_block(data.row(i), data.row(0), i, d, d,
                                          eps_.data() + lower_index(0, i));
    }
  });
  if (!with_bessel_terms) return;
  // Merged clusters' means are convex combinations of leaves, so their distances never exceed
  // the largest leaf distance. They can fall below the smallest one, but seldom far: MPost2
  // merges close pairs first. Over whole runs (Gaussian data at n = 64 ... 500, d = 20 and 64,
  // and the digits, identity and diagonal covariance) no term fell below 0.86 of the smallest
  // leaf distance; the fit reaches kFitBelowSmallest below it, and anything smaller takes
  // log_bessel_k (the same value to 1e-13, slower). The fit's cost grows with the binades it
  // covers: from 1e-6 of the smallest distance it spent 20 binades where runs had no terms,
  // ~0.1 ms of the 0.31 ms that the fit took in an MPost2 process at (n, d) = (64, 64)
  // (bench/RESULTS.md, thirty-first session).
  constexpr double kFitBelowSmallest = 1.0 / 64;
  double smallest = std::numeric_limits<double>::infinity(), largest = 0.0;
  for (double e : eps_)
    if (e > 0.0) {
      smallest = std::min(smallest, e);
      largest = std::max(largest, e);
    }
  // Where no fit can be made (distances near the ends of the doubles' range), every term comes
  // from log_bessel_k: slower, the same values to 1e-13.
  if (largest > 0.0) {
    try {
      // Its pieces on the run's threads: one thread took ~0.4 ms, serial time in every run.
      bessel_.emplace(shape_, smallest * kFitBelowSmallest, largest * 1.0001 + 1e-300, 0.5 * shape_,
                      [](std::size_t count, std::size_t work, const auto& body) {
                        parallel_for_work(
                            0, count, work,
                            [&](const auto& range) { body(range.begin(), range.end()); },
                            kUniformTasksPerThread);
                      });
    } catch (const std::exception&) {
      bessel_.reset();
    }
  }
  // The Bessel terms L_ij first (in the layout of eps_), then the scales, then E in place.
  leaf_weights_ = LargeArray<double>(eps_.size());
  parallel_for_range(0, n_, [&](const auto& rows) {
    for (std::size_t i = rows.begin(); i != rows.end(); ++i) {
      const std::size_t row = lower_index(0, i);
      mpost2_terms(eps_.data() + row, leaf_weights_.data() + row, i);
    }
  });
  leaf_scales_.assign(n_, -std::numeric_limits<double>::infinity());
  for (std::size_t i = 1; i < n_; ++i) {
    const double* row = leaf_weights_.data() + lower_index(0, i);
    for (std::size_t j = 0; j < i; ++j) {
      leaf_scales_[i] = std::max(leaf_scales_[i], row[j]);
      leaf_scales_[j] = std::max(leaf_scales_[j], row[j]);
    }
  }
  for (double& scale : leaf_scales_) scale *= 0.5;
  if (n_ == 1) leaf_scales_[0] = 0.0;
  // E = exp(L - sigma_i - sigma_j), and (leaf sums) the first state's leaf row sums over the
  // stored (nonzero) weights: log(E_ij e^{sigma_j}) = L_ij - sigma_i, so tau_i is the largest
  // L_ij - sigma_i and scaled_i = sum_j exp(L_ij - sigma_i - tau_i).
  const bool leaf_sums = mpost2_uses_leaf_sums(row_sums, n_);
  std::shared_ptr<LeafRowSums> sums;
  if (leaf_sums) {
    sums = std::make_shared<LeafRowSums>();
    sums->tau.assign(n_, 0.0);  // the first state lists the leaves in order: position = id
    sums->scaled.assign(n_, 0.0);
  }
  parallel_for_range(0, n_, [&](const auto& rows) {
    std::vector<double> logs;
    for (std::size_t i = rows.begin(); i != rows.end(); ++i) {
      double* row = leaf_weights_.data() + lower_index(0, i);
      if (sums) logs.assign(row, row + i);  // L_ij
      for (std::size_t j = 0; j < i; ++j) row[j] -= leaf_scales_[i] + leaf_scales_[j];
      kernels::exp_array(row, row, i);
      for (std::size_t j = 0; j < i; ++j)
        if (!(row[j] >= kSmallestPairWeight)) row[j] = 0.0;
      if (!sums) continue;
      for (std::size_t j = 0; j < i; ++j)
        logs[j] =
            row[j] > 0.0 ? logs[j] - leaf_scales_[i] : -std::numeric_limits<double>::infinity();
      sum_from_logs(logs.data(), i, sums->tau[i], sums->scaled[i]);
    }
  });
  initial_sums_ = std::move(sums);
  if (!initial_sums_) return;
  leaf_columns_ = LargeArray<double>(leaf_weights_.size());
  parallel_for_range(0, n_, [&](const auto& columns) {
    for (std::size_t j = columns.begin(); j != columns.end(); ++j) {
      double* column = leaf_columns_.data() + j * (2 * n_ - j - 1) / 2;
      for (std::size_t i = j + 1; i < n_; ++i) column[i - j - 1] = leaf_weights_[lower_index(j, i)];
    }
  });
}

void sum_from_logs(double* logs, std::size_t count, double& tau, double& scaled) {
  const double largest =
      count > 0 ? *std::max_element(logs, logs + count) : -std::numeric_limits<double>::infinity();
  if (!std::isfinite(largest)) {
    tau = scaled = 0.0;
    return;
  }
  for (std::size_t k = 0; k < count; ++k) logs[k] -= largest;
  kernels::exp_array(logs, logs, count);  // exp(-inf) = 0
  double sum = 0.0;
  for (std::size_t k = 0; k < count; ++k) sum += logs[k];
  tau = largest + std::log(sum);
  scaled = 1.0;
}

void LeafPairCache::mpost2_terms(const double* eps, double* out, std::size_t count) const {
  if (!bessel_) {
    for (std::size_t k = 0; k < count; ++k) out[k] = mpost2_term(eps[k]);
    return;
  }
  for (std::size_t k = 0; k < count; ++k)
    out[k] = std::max(eps[k], std::numeric_limits<double>::min());
  bessel_->terms(out, out, count);
}

void fill_leaves(const WhitenedData& data, double leaf_variance, std::span<ClusterNode> leaves) {
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    leaves[i].id = i;
    leaves[i].variance = leaf_variance;
    leaves[i].mean.assign(data.row(i), data.row(i) + data.d);
  }
}

MergeTree to_merge_tree(const ParticleState& state, std::size_t leaf_count) {
  return live_merge_tree(state, leaf_count);
}

}  // namespace kingman::detail
