#pragma once
// Messages of the binary / multinomial model (MODEL.md section 7, Teh et al. eqs. 14-15).
// Column d of cluster c carries M_c^d in R^K normalized so that q_d . M_c^d = 1: it is the
// likelihood of the cluster's leaves given the state k at the cluster, divided by their
// probability under the stationary process. A leaf observing k has M^{dk'} = [k' = k] / q_dk;
// a subtree that observes nothing in column d has M^d = 1 and is flagged as such, so that it
// contributes exactly nothing. Merging l and r at time t <= min(t_l, t_r), with
// x_d = e^{lambda_d (2t - t_l - t_r)} and the overlap S_d = sum_k q_dk M_l^{dk} M_r^{dk},
//   Z^d = 1 - x_d (1 - S_d) = (1 - x_d) + x_d S_d      (a sum of two terms >= 0: no cancellation)
//   M^d = [(1 - a_l) + a_l M_l^d] (.) [(1 - a_r) + a_r M_r^d] / Z^d,  a_c = e^{lambda_d (t - t_c)}.
// Derivation (Felsenstein pruning with P(s) = e^{-lambda s} I + (1 - e^{-lambda s}) 1 q^T and a
// stationary root): the unnormalized upward message c (1 - a (1 - M)) of a child with
// c = q . m has q-mass c, so Z^d is the q-mass of the product divided by c_l c_r, and
// p(x | tree) = prod over observed entries q_{d, x_id} * prod_k Z_k.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kingman/model/cache_line_vector.hpp"
#include "kingman/model/discrete_data.hpp"
#include "kingman/model/log_product.hpp"

namespace kingman {

// A read-only view of one cluster of the model: its messages, observed flags and time. The
// merge math below works on views, so the slot store (DiscreteMessages) and the persistent
// clusters of the SMC particles (inference/smc/discrete_smc.cpp) share one implementation.
struct DiscreteClusterView {
  const double* message = nullptr;          // d * K values: column j at message + j * K
  const unsigned char* observed = nullptr;  // d flags: whether any leaf observes column j
  double time = 0.0;                        // t_c <= 0
};

// S_d = sum_k q_dk M_l^{dk} M_r^{dk} of column `col`, given the two columns' K values. Inline:
// the greedy algorithms compute it for every shared column of every pair.
inline double discrete_overlap(const DiscreteData& data, std::size_t col, const double* column_l,
                               const double* column_r) {
  const double* q = data.q(col);
  double sum = 0.0;
  for (std::size_t k = 0; k < data.categories; ++k) sum += q[k] * column_l[k] * column_r[k];
  return sum;
}

// Merges clusters l and r at time t <= min(t_l, t_r): writes the merged cluster's d * K message
// and d observed flags and returns its local log-likelihood log Z (-inf for an impossible merge;
// the merged message is then set to all ones so that later merges stay finite). The outputs may
// be the storage of l or of r (each column is read before it is written).
double merge_discrete_clusters(const DiscreteData& data, DiscreteClusterView l,
                               DiscreteClusterView r, double t, double* message_out,
                               unsigned char* observed_out);

class DiscreteMessages {
 public:
  // Slots 0..n-1 hold the leaves; merging writes the new cluster into one of its children's
  // slots, so storage stays n * d * K doubles. The data must outlive the messages.
  explicit DiscreteMessages(const DiscreteData& data);

  const DiscreteData& data() const { return *data_; }
  std::size_t slots() const { return time_.size(); }
  std::size_t dims() const { return data_->d; }
  std::size_t categories() const { return data_->categories; }
  double time(std::size_t slot) const { return time_[slot]; }
  // Whether any leaf of the cluster in this slot observes the column.
  bool observes(std::size_t slot, std::size_t col) const {
    return observed_[slot * data_->d + col] != 0;
  }
  // M^d of the cluster in a slot: K values with q_d . M^d = 1 (all ones where unobserved).
  const double* message(std::size_t slot, std::size_t col) const {
    return message_.data() + (slot * data_->d + col) * data_->categories;
  }
  // The cluster in a slot, valid until the slot is merged into.
  DiscreteClusterView cluster(std::size_t slot) const {
    return {message_.data() + slot * data_->d * data_->categories,
            observed_.data() + slot * data_->d, time_[slot]};
  }
  // S_d = sum_k q_dk M_l^{dk} M_r^{dk} of one column.
  double overlap(std::size_t l, std::size_t r, std::size_t col) const {
    return discrete_overlap(*data_, col, message(l, col), message(r, col));
  }

  // log Z of merging the clusters in slots l and r at time t <= min(t_l, t_r); -inf where a
  // column's Z^d is 0 (two leaves that disagree merged at time 0).
  double log_local_likelihood(std::size_t l, std::size_t r, double t) const;

  // Merges slots l and r at time t <= min(t_l, t_r) into slot `into` (l or r) and returns the
  // local log-likelihood log Z (-inf for an impossible merge; the merged message is then set
  // to all ones so that later merges stay finite).
  double merge(std::size_t l, std::size_t r, double t, std::size_t into);

 private:
  const DiscreteData* data_;
  std::vector<double> message_;          // slots * d * K
  std::vector<unsigned char> observed_;  // slots * d
  std::vector<double> time_;             // slots
};

// Everything about a pair of live clusters that their local likelihood needs: the overlap
// S_d and rate lambda_d of every column both clusters observe, and the two cluster times.
// Fixed once both clusters exist, so proposals can evaluate log Z_C(t) for many t cheaply
// (O(shared columns) each). For a current time T and a duration delta, the merge time is
// t = T - delta.
class DiscretePair {
 public:
  DiscretePair() = default;
  DiscretePair(const DiscreteMessages& messages, std::size_t l, std::size_t r) {
    assign(messages, l, r);
  }
  // A pair given directly by the overlaps S_d and rates lambda_d of its shared columns and the
  // two cluster times (for tests and for callers that computed the overlaps themselves).
  DiscretePair(const std::vector<double>& overlaps, const std::vector<double>& rates, double time_l,
               double time_r);
  // Reuses this object's storage for the pair (l, r).
  void assign(const DiscreteMessages& messages, std::size_t l, std::size_t r) {
    assign(messages.data(), messages.cluster(l), messages.cluster(r));
  }
  // Where both clusters observe every column, the pair reads the data's rates (nothing is copied
  // per pair): it must then not outlive `data`.
  void assign(const DiscreteData& data, DiscreteClusterView l, DiscreteClusterView r);

  // min(t_l, t_r): the latest feasible merge time.
  double latest_time() const { return latest_time_; }
  // t_l + t_r.
  double time_sum() const { return time_sum_; }
  // Columns both clusters observe; only they enter Z.
  std::size_t shared_columns() const { return overlap_.size(); }
  double overlap(std::size_t k) const { return overlap_[k]; }
  const double* overlaps() const { return overlap_.data(); }  // shared_columns() of them
  double rate(std::size_t k) const { return rates()[k]; }
  // Every shared column has the same lambda (true when there are none).
  bool common_rate() const { return common_rate_; }

  // log Z_C(t) = sum_d log Z^d for a merge at time t <= latest_time().
  double log_local_likelihood(double t) const;
  // The same with its logarithm left to the caller where that can be: returns true and sets
  // `value` to Z_C(t) itself (a positive normal number: the plain product of one rate's factors
  // within range), or returns false and sets `value` to log Z_C(t). PriorPost takes a state's
  // logs at once (kernels::log_array): a libm log per pair was 20 % of a binary PriorPost run.
  bool local_likelihood_product(double t, double& value) const;
  // d/dt log Z_C(t) = sum_d 2 lambda_d x_d (S_d - 1) / Z^d; -inf where Z^d = 0.
  double log_local_likelihood_slope(double t) const;
  // d^2/dt^2 log Z_C(t) = sum_d 4 lambda_d^2 x_d (S_d - 1) / (Z^d)^2.
  double log_local_likelihood_curvature(double t) const;
  // Slope and curvature in one pass.
  void log_local_likelihood_derivatives(double t, double& slope, double& curvature) const;

 private:
  // Written for every pair a thread scores: in buffers of their own cache lines.
  CacheLineVector<double> overlap_;  // S_d of the shared columns
  CacheLineVector<double> rate_;     // lambda_d of the shared columns, unless data_rates_
  // The data's rates where every column is shared (assign): copying them for every pair was a
  // library call per pair, 4.5 % of a binary PriorPost run.
  const double* data_rates_ = nullptr;
  // lambda_d of the shared columns.
  const double* rates() const { return data_rates_ ? data_rates_ : rate_.data(); }
  double latest_time_ = 0.0;
  double time_sum_ = 0.0;
  bool common_rate_ = true;
};

}  // namespace kingman
