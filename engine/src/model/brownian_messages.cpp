#include "kingman/model/brownian_messages.hpp"

#include <cmath>
#include <numbers>

#include "kingman/kernels/offset_sums.hpp"
#include "kingman/model/log_product.hpp"

namespace kingman {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
const double kLogTwoPi = std::log(2.0 * std::numbers::pi);
}  // namespace

double log_local_likelihood(double dims, double eps, double s) {
  return -0.5 * dims * (kLogTwoPi + std::log(s)) - eps / (2.0 * s);
}

BrownianMessages::BrownianMessages(const WhitenedData& data, double leaf_variance)
    : d_(data.d),
      stride_(data.has_missing ? kernels::padded_size(data.d) : data.d),
      per_dimension_(data.has_missing),
      log_lambda_diagonal_(&data.log_lambda_diagonal),
      log_det_lambda_(data.log_det_lambda),
      time_(data.n, 0.0) {
  if (per_dimension_) {
    // Padding places: mean 0, variance +inf (unobserved), never written by a merge.
    mean_.assign(data.n * stride_, 0.0);
    variances_.assign(data.n * stride_, kInf);
    for (std::size_t i = 0; i < data.n; ++i) {
      for (std::size_t j = 0; j < d_; ++j) {
        const double value = data.x[i * d_ + j];
        if (std::isnan(value)) continue;  // missing: variance +inf, mean unused (0)
        mean_[i * stride_ + j] = value;
        variances_[i * stride_ + j] = leaf_variance;
      }
    }
    variance_.assign(data.n, leaf_variance);
  } else {
    mean_ = data.x;
    variance_.assign(data.n, leaf_variance);
  }
}

void BrownianMessages::contrast(std::size_t l, std::size_t r, double t, double* difference,
                                double* scale) const {
  const double* yl = mean(l);
  const double* yr = mean(r);
  for (std::size_t j = 0; j < d_; ++j) {
    difference[j] = yl[j] - yr[j];
    scale[j] = per_dimension_ ? variances(l)[j] + variances(r)[j] + (time_[l] - t) + (time_[r] - t)
                              : variance_[l] + variance_[r] + (time_[l] - t) + (time_[r] - t);
  }
}

double BrownianMessages::merge(std::size_t l, std::size_t r, double t, std::size_t into) {
  const double* yl = mean(l);
  const double* yr = mean(r);
  double* y = mean_.data() + into * stride_;
  double log_z = 0.0;
  if (!per_dimension_) {
    const double sigma_l = variance_[l] + time_[l] - t;
    const double sigma_r = variance_[r] + time_[r] - t;
    const double s = sigma_l + sigma_r;
    log_z = log_local_likelihood(static_cast<double>(d_), squared_distance(l, r), s) -
            0.5 * log_det_lambda_;
    const double wl = sigma_r / s;  // weight of y_l: (1/sigma_l) / (1/sigma_l + 1/sigma_r)
    const double wr = sigma_l / s;
    for (std::size_t j = 0; j < d_; ++j) y[j] = wl * yl[j] + wr * yr[j];
    variance_[into] = sigma_l * sigma_r / s;
  } else {
    log_z = merge_brownian_clusters(view(l), view(r), d_, t, *log_lambda_diagonal_, y,
                                    variances_.data() + into * stride_);
  }
  time_[into] = t;
  return log_z;
}

SharedDimensions shared_dimensions(const BrownianMessages& messages, std::size_t l, std::size_t r,
                                   double current_time, const WhitenedData& data) {
  SharedDimensions shared;
  shared_dimensions(messages, l, r, current_time, data, shared);
  return shared;
}

void shared_dimensions(const BrownianMessages& messages, std::size_t l, std::size_t r,
                       double current_time, const WhitenedData& data, SharedDimensions& shared) {
  shared_dimensions(messages.view(l), messages.view(r), messages.dims(), current_time,
                    data.log_lambda_diagonal, shared);
}

void shared_dimensions(BrownianClusterView l, BrownianClusterView r, std::size_t d,
                       double current_time, const std::vector<double>& log_lambda_diagonal,
                       SharedDimensions& shared) {
  shared.offset.clear();
  shared.squared_delta.clear();
  shared.log_lambda.clear();
  const double dt = (l.time - current_time) + (r.time - current_time);
  for (std::size_t j = 0; j < d; ++j) {
    if (std::isinf(l.variance[j]) || std::isinf(r.variance[j])) continue;
    const double diff = l.mean[j] - r.mean[j];
    shared.offset.push_back(l.variance[j] + r.variance[j] + dt);
    shared.squared_delta.push_back(diff * diff);
    shared.log_lambda.push_back(log_lambda_diagonal[j]);
  }
}

double log_local_likelihood(BrownianClusterView l, BrownianClusterView r, std::size_t d, double t,
                            const std::vector<double>& log_lambda_diagonal) {
  const double dt = (l.time - t) + (r.time - t);
  LogProduct offsets;
  double energy = 0.0, log_lambda = 0.0, shared = 0.0;
  for (std::size_t j = 0; j < d; ++j) {
    if (std::isinf(l.variance[j]) || std::isinf(r.variance[j])) continue;
    const double s = l.variance[j] + r.variance[j] + dt;
    const double diff = l.mean[j] - r.mean[j];
    offsets.multiply(s);
    energy += diff * diff / s;
    log_lambda += log_lambda_diagonal[j];
    shared += 1.0;
  }
  return -0.5 * (shared * kLogTwoPi + offsets.log() + energy + log_lambda);
}

double merge_brownian_clusters(BrownianClusterView l, BrownianClusterView r, std::size_t d,
                               double t, const std::vector<double>& log_lambda_diagonal, double* y,
                               double* v) {
  double log_z = 0.0;
  const double dt_l = l.time - t;
  const double dt_r = r.time - t;
  for (std::size_t j = 0; j < d; ++j) {
    const double sigma_l = l.variance[j] + dt_l;
    const double sigma_r = r.variance[j] + dt_r;
    if (std::isinf(sigma_l) && std::isinf(sigma_r)) {
      v[j] = kInf;
      y[j] = 0.0;
    } else if (std::isinf(sigma_l)) {
      v[j] = sigma_r;
      y[j] = r.mean[j];
    } else if (std::isinf(sigma_r)) {
      v[j] = sigma_l;
      y[j] = l.mean[j];
    } else {
      const double s = sigma_l + sigma_r;
      const double diff = l.mean[j] - r.mean[j];
      log_z += log_local_likelihood(1.0, diff * diff, s) - 0.5 * log_lambda_diagonal[j];
      y[j] = (sigma_r / s) * l.mean[j] + (sigma_l / s) * r.mean[j];
      v[j] = sigma_l * sigma_r / s;
    }
  }
  return log_z;
}

double log_local_likelihood(const SharedDimensions& shared, double duration) {
  double log_z = 0.0;
  for (std::size_t j = 0; j < shared.offset.size(); ++j) {
    log_z += log_local_likelihood(1.0, shared.squared_delta[j], shared.offset[j] + 2.0 * duration) -
             0.5 * shared.log_lambda[j];
  }
  return log_z;
}

}  // namespace kingman
