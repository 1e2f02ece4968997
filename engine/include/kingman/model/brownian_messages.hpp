#pragma once
// Messages of the Brownian diffusion model (MODEL.md section 3): each cluster carries a mean
// y^ (whitened), a variance v (times Lambda) and its merge time t <= 0. Without missing entries
// v is one scalar per cluster; with missing entries v is carried per dimension and an
// unobserved dimension has v = +inf (it contributes nothing, section 3.4).
#include <cstddef>
#include <limits>
#include <vector>

#include "kingman/model/whitened_data.hpp"

namespace kingman {

// log N(0; 0, s) summed over d dimensions given the squared distance eps:
// -(d/2) log(2 pi s) - eps / (2 s). Lambda's log determinant is added by the caller.
double log_local_likelihood(double dims, double eps, double s);

// One cluster's per-dimension message, wherever it is stored (BrownianMessages' slots, or the
// nodes of an SMC particle): d means, d variances (+inf where unobserved) and its time.
struct BrownianClusterView {
  const double* mean;
  const double* variance;
  double time;
};

class BrownianMessages {
 public:
  // Slots 0..n-1 hold the leaves; merging writes the new cluster into one of its children's
  // slots, so storage stays n slots.
  BrownianMessages(const WhitenedData& data, double leaf_variance);

  std::size_t dims() const { return d_; }
  bool per_dimension() const { return per_dimension_; }
  const double* mean(std::size_t slot) const { return mean_.data() + slot * stride_; }
  double time(std::size_t slot) const { return time_[slot]; }
  // Scalar variance (only when !per_dimension()).
  double variance(std::size_t slot) const { return variance_[slot]; }
  // Per-dimension variances, +inf where unobserved (only when per_dimension()). Rows are then
  // padded to whole SIMD blocks (kernels::padded_size(d)) with variance +inf and mean 0, as
  // kernels::gather_offsets reads them.
  const double* variances(std::size_t slot) const { return variances_.data() + slot * stride_; }
  BrownianClusterView view(std::size_t slot) const {
    return {mean(slot), variances(slot), time_[slot]};
  }
  // a_c = v_c + t_c: the part of the duration offset r_C owned by one cluster (section 3.2).
  double offset(std::size_t slot) const { return variance_[slot] + time_[slot]; }

  // Squared whitened distance between two slots' means (scalar case).
  double squared_distance(std::size_t a, std::size_t b) const {
    const double* ya = mean(a);
    const double* yb = mean(b);
    double sum = 0.0;
    for (std::size_t j = 0; j < d_; ++j) sum += (ya[j] - yb[j]) * (ya[j] - yb[j]);
    return sum;
  }

  // The independent contrast of a merge at time t (MODEL.md section 8): difference[j] =
  // y_lj - y_rj and scale[j] = sigma_lj + sigma_rj, with scale +inf where the two children do
  // not both observe dimension j.
  void contrast(std::size_t l, std::size_t r, double t, double* difference, double* scale) const;

  // Merges slots l and r at time t (t <= both children's times) into slot `into` (l or r)
  // and returns the local log-likelihood log Z, including -1/2 log|Lambda| (per dimension
  // for the dimensions both children observe).
  double merge(std::size_t l, std::size_t r, double t, std::size_t into);

 private:
  std::size_t d_;
  std::size_t stride_;  // between rows of mean_ and variances_: d, or padded per dimension
  bool per_dimension_;
  const std::vector<double>* log_lambda_diagonal_;
  double log_det_lambda_;
  std::vector<double> mean_;       // n rows
  std::vector<double> variance_;   // n (scalar case)
  std::vector<double> variances_;  // n rows (per-dimension case)
  std::vector<double> time_;       // n
};

// Per-dimension pair terms at the current time T: for each dimension both observe,
// r_j = v_lj + v_rj + (t_l - T) + (t_r - T) and the squared difference Delta_j^2.
struct SharedDimensions {
  std::vector<double> offset;         // r_j
  std::vector<double> squared_delta;  // Delta_j^2
  std::vector<double> log_lambda;     // log Lambda_jj of those dimensions
};
SharedDimensions shared_dimensions(const BrownianMessages& messages, std::size_t l, std::size_t r,
                                   double current_time, const WhitenedData& data);
// The same into `out`, whose vectors keep their capacity: the greedy algorithms score every pair
// of data with missing entries this way, where three allocations per pair cost a third of the run.
void shared_dimensions(const BrownianMessages& messages, std::size_t l, std::size_t r,
                       double current_time, const WhitenedData& data, SharedDimensions& out);

// log Z(delta) for per-dimension messages (including -1/2 sum log Lambda_jj).
double log_local_likelihood(const SharedDimensions& shared, double duration);

// shared_dimensions for two views at current_time <= both times.
void shared_dimensions(BrownianClusterView l, BrownianClusterView r, std::size_t d,
                       double current_time, const std::vector<double>& log_lambda_diagonal,
                       SharedDimensions& out);
// log Z of merging two views at time t <= both times (merge_brownian_clusters' value, without
// building the merged message), with one log per pair rather than per dimension.
double log_local_likelihood(BrownianClusterView l, BrownianClusterView r, std::size_t d, double t,
                            const std::vector<double>& log_lambda_diagonal);
// Merges two views at time t <= both times into d means and variances; returns log Z,
// including -1/2 log Lambda_jj for the dimensions both observe.
double merge_brownian_clusters(BrownianClusterView l, BrownianClusterView r, std::size_t d,
                               double t, const std::vector<double>& log_lambda_diagonal,
                               double* mean, double* variance);

}  // namespace kingman
