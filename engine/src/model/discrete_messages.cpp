#include "kingman/model/discrete_messages.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "kingman/error.hpp"
#include "kingman/kernels/vector_math.hpp"

namespace kingman {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// Z^d = (1 - x) + x S with x = e^y, y <= 0: both terms are >= 0, so a small Z^d keeps its
// relative accuracy.
double column_likelihood(double y, double overlap) {
  return -std::expm1(y) + std::exp(y) * overlap;
}
}  // namespace

DiscreteMessages::DiscreteMessages(const DiscreteData& data)
    : data_(&data),
      message_(data.n * data.d * data.categories, 1.0),
      observed_(data.n * data.d, 0),
      time_(data.n, 0.0) {
  const std::size_t k_count = data.categories;
  for (std::size_t i = 0; i < data.n; ++i) {
    for (std::size_t j = 0; j < data.d; ++j) {
      const std::int32_t v = data.value(i, j);
      if (v == DiscreteData::kMissing) continue;
      observed_[i * data.d + j] = 1;
      double* m = message_.data() + (i * data.d + j) * k_count;
      std::fill(m, m + k_count, 0.0);
      m[v] = 1.0 / data.q(j)[v];
    }
  }
}

double merge_discrete_clusters(const DiscreteData& data, DiscreteClusterView l,
                               DiscreteClusterView r, double t, double* message_out,
                               unsigned char* observed_out) {
  const std::size_t k_count = data.categories;
  const double dt_l = t - l.time;  // <= 0
  const double dt_r = t - r.time;
  // The branch factors and the exponentials of Z^d depend on the column only through its
  // rate: computed again only where the rate changes (once per merge with one rate for every
  // column, the default), the same values as per column. (Six of the seven transcendental
  // calls per column were 57 % of a binary PriorPrior run at n = 2 000, most of the rest of a
  // merge: bench/RESULTS.md, Engine: SMC, twenty-eighth session.)
  double rate = std::numeric_limits<double>::quiet_NaN();  // of the factors below
  double a_l = 0.0, b_l = 0.0, a_r = 0.0, b_r = 0.0, e_y = 0.0, em1_y = 0.0;
  double log_z = 0.0;
  for (std::size_t j = 0; j < data.d; ++j) {
    const bool obs_l = l.observed[j] != 0, obs_r = r.observed[j] != 0;
    double* out = message_out + j * k_count;
    const double lambda = data.mutation_rate[j];
    if (!obs_l && !obs_r) {
      std::fill(out, out + k_count, 1.0);
      observed_out[j] = 0;
      continue;
    }
    const double* ml = l.message + j * k_count;
    const double* mr = r.message + j * k_count;
    if (!(lambda == rate)) {
      // Upward message through a branch: (1 - a) + a M, with a = e^{lambda dt}.
      rate = lambda;
      a_l = std::exp(lambda * dt_l);
      b_l = -std::expm1(lambda * dt_l);
      a_r = std::exp(lambda * dt_r);
      b_r = -std::expm1(lambda * dt_r);
      // column_likelihood's, at y = lambda (dt_l + dt_r).
      const double y = lambda * (dt_l + dt_r);
      e_y = std::exp(y);
      em1_y = std::expm1(y);
    }
    observed_out[j] = 1;
    if (!obs_l || !obs_r) {
      // One side is all ones: S_d = q . M = 1, so Z^d = 1 exactly and only the branch acts.
      const double* m = obs_l ? ml : mr;
      const double a = obs_l ? a_l : a_r, b = obs_l ? b_l : b_r;
      for (std::size_t k = 0; k < k_count; ++k) out[k] = b + a * m[k];
      continue;
    }
    // column_likelihood(y, overlap), operation for operation.
    const double z = -em1_y + e_y * discrete_overlap(data, j, ml, mr);
    if (!(z > 0.0)) {
      log_z = -kInf;
      std::fill(out, out + k_count, 1.0);
    } else {
      log_z += std::log(z);
      for (std::size_t k = 0; k < k_count; ++k)
        out[k] = (b_l + a_l * ml[k]) * (b_r + a_r * mr[k]) / z;
    }
  }
  return log_z;
}

double DiscreteMessages::log_local_likelihood(std::size_t l, std::size_t r, double t) const {
  double log_z = 0.0;
  const double offset = 2.0 * t - time_[l] - time_[r];
  for (std::size_t j = 0; j < data_->d; ++j) {
    if (!observes(l, j) || !observes(r, j)) continue;
    log_z += std::log(column_likelihood(data_->mutation_rate[j] * offset, overlap(l, r, j)));
  }
  return log_z;
}

double DiscreteMessages::merge(std::size_t l, std::size_t r, double t, std::size_t into) {
  const double log_z = merge_discrete_clusters(
      *data_, cluster(l), cluster(r), t, message_.data() + into * data_->d * data_->categories,
      observed_.data() + into * data_->d);
  time_[into] = t;
  return log_z;
}

DiscretePair::DiscretePair(const std::vector<double>& overlaps, const std::vector<double>& rates,
                           double time_l, double time_r)
    : overlap_(overlaps.begin(), overlaps.end()),
      rate_(rates.begin(), rates.end()),
      latest_time_(std::min(time_l, time_r)),
      time_sum_(time_l + time_r) {
  if (overlap_.size() != rate_.size())
    throw Error("DiscretePair: " + std::to_string(overlap_.size()) + " overlaps but " +
                std::to_string(rate_.size()) + " rates");
  common_rate_ =
      std::all_of(rate_.begin(), rate_.end(), [&](double rate) { return rate == rate_.front(); });
}

namespace {

// Whether the count values are all the same, by their bits, or-ed, so that the loop vectorizes
// (compared as doubles one by one, this was a third of DiscretePair::assign's time on binary
// data). Rates are positive and finite (DiscreteData), where equal bits are equal values.
bool all_same_bits(const double* values, std::size_t count) {
  if (count == 0) return true;
  const std::uint64_t first = std::bit_cast<std::uint64_t>(values[0]);
  std::uint64_t differing = 0;
  for (std::size_t k = 1; k < count; ++k)
    differing |= std::bit_cast<std::uint64_t>(values[k]) ^ first;
  return differing == 0;
}

}  // namespace

void DiscretePair::assign(const DiscreteData& data, DiscreteClusterView l, DiscreteClusterView r) {
  latest_time_ = std::min(l.time, r.time);
  time_sum_ = l.time + r.time;
  const std::size_t k_count = data.categories;
  // Runs once per pair of the greedy algorithms: every column is written at the next shared
  // position, which advances only for a shared column, into storage sized for every column
  // (kept across assigns) and then cut to the shared ones. No branch on the missing pattern,
  // which no predictor learns. (An unobserved column's message is all ones: finite.)
  overlap_.resize(data.d);
  double* const overlap = overlap_.data();
  const double* const mutation_rate = data.mutation_rate.data();
  std::size_t shared = 0;
  if (k_count == 2) {
    // Binary data, the PostPost and race pair masses' common case: discrete_overlap's sum with
    // its two terms written out ((0 + a) + b is a + b exactly), for every column at once in SIMD
    // lanes (GCC left the interleaved loop scalar: 28 % of a binary PostPost run), then the
    // columns that not both clusters observe taken out, with their rates (none, on complete
    // data).
    kernels::binary_overlaps(data.q(0), l.message, r.message, overlap, data.d);
    for (std::size_t j = 0; j < data.d; ++j)
      shared += static_cast<std::size_t>((l.observed[j] != 0) & (r.observed[j] != 0));
    if (shared < data.d) {
      rate_.resize(data.d);
      double* const rate = rate_.data();
      shared = 0;
      for (std::size_t j = 0; j < data.d; ++j) {
        overlap[shared] = overlap[j];
        rate[shared] = mutation_rate[j];
        shared += static_cast<std::size_t>((l.observed[j] != 0) & (r.observed[j] != 0));
      }
    }
  } else {
    rate_.resize(data.d);
    double* const rate = rate_.data();
    for (std::size_t j = 0; j < data.d; ++j) {
      overlap[shared] = discrete_overlap(data, j, l.message + j * k_count, r.message + j * k_count);
      rate[shared] = mutation_rate[j];
      shared += static_cast<std::size_t>((l.observed[j] != 0) & (r.observed[j] != 0));
    }
  }
  overlap_.resize(shared);
  if (shared == data.d) {
    data_rates_ = mutation_rate;
  } else {
    data_rates_ = nullptr;
    rate_.resize(shared);
  }
  common_rate_ = all_same_bits(rates(), shared);
}

double DiscretePair::log_local_likelihood(double t) const {
  double value;
  return local_likelihood_product(t, value) ? std::log(value) : value;
}

bool DiscretePair::local_likelihood_product(double t, double& value) const {
  const double offset = 2.0 * t - time_sum_;
  LogProduct z;
  if (common_rate_ && !overlap_.empty()) {
    // One rate: x is the same for every column, so one exp and expm1 per pair, not per column;
    // and the same for every pair of equal time sums (PriorPost's pairs of leaves at one drawn
    // duration), so the last y's are kept.
    const double y = rates()[0] * offset;
    thread_local double last_y = std::numeric_limits<double>::quiet_NaN();
    thread_local double last_x = 0.0, last_one_minus_x = 0.0;
    if (!(y == last_y)) {
      last_x = std::exp(y);
      last_one_minus_x = -std::expm1(y);
      last_y = y;
    }
    const double x = last_x, one_minus_x = last_one_minus_x;
    // Each factor lies in [1 - x, max(1, max S_d)]. Within [1e-5, 1e5], 28 of them keep every
    // partial product within [1e-140, 1e140], where LogProduct multiplies without folding: the
    // plain product is then its value, bit for bit, without its two range checks per column.
    const std::size_t columns = overlap_.size();
    if (columns <= 28 && one_minus_x >= 1e-5 &&
        kernels::max_array(overlap_.data(), columns) <= 1e5) {
      double product = 1.0;
      for (const double overlap : overlap_) product *= one_minus_x + x * overlap;
      // Within [1e-140, 1e140] for finite overlaps; anything else keeps libm's log.
      if (std::isnormal(product)) {
        value = product;
        return true;
      }
      value = std::log(product);
      return false;
    }
    for (const double overlap : overlap_) z.multiply(one_minus_x + x * overlap);
  } else {
    for (std::size_t k = 0; k < overlap_.size(); ++k)
      z.multiply(column_likelihood(rates()[k] * offset, overlap_[k]));
  }
  value = z.log();
  return false;
}

double DiscretePair::log_local_likelihood_slope(double t) const {
  double slope = 0.0, curvature = 0.0;
  log_local_likelihood_derivatives(t, slope, curvature);
  return slope;
}

double DiscretePair::log_local_likelihood_curvature(double t) const {
  double slope = 0.0, curvature = 0.0;
  log_local_likelihood_derivatives(t, slope, curvature);
  return curvature;
}

void DiscretePair::log_local_likelihood_derivatives(double t, double& slope,
                                                    double& curvature) const {
  const double offset = 2.0 * t - time_sum_;
  slope = curvature = 0.0;
  const double* const rate = rates();
  for (std::size_t k = 0; k < overlap_.size(); ++k) {
    const double y = rate[k] * offset;
    // x and 1 - x from one libm call, each to relative precision: 1 + expm1(y) for x > 0.6,
    // 1 - x for x <= 0.6 (at least 0.4).
    double x, one_minus_x;
    if (y > -0.5) {
      const double x_minus_one = std::expm1(y);
      x = 1.0 + x_minus_one;
      one_minus_x = -x_minus_one;
    } else {
      x = std::exp(y);
      one_minus_x = 1.0 - x;
    }
    const double z = one_minus_x + x * overlap_[k];
    if (!(z > 0.0)) {
      slope = curvature = -kInf;
      return;
    }
    const double inverse = 1.0 / z;
    const double term = 2.0 * rate[k] * x * (overlap_[k] - 1.0) * inverse;  // d/dt log Z^d
    slope += term;
    curvature += 2.0 * rate[k] * term * inverse;
  }
}

}  // namespace kingman
