#include "kingman/model/brownian_messages.hpp"

#include <cmath>
#include <numbers>

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
      per_dimension_(data.has_missing),
      log_lambda_diagonal_(&data.log_lambda_diagonal),
      log_det_lambda_(data.log_det_lambda),
      mean_(data.x),
      time_(data.n, 0.0) {
  if (per_dimension_) {
    variances_.resize(data.n * d_);
    for (std::size_t k = 0; k < data.n * d_; ++k) {
      const bool missing = std::isnan(mean_[k]);
      variances_[k] = missing ? kInf : leaf_variance;
      if (missing) mean_[k] = 0.0;  // value unused where the variance is infinite
    }
    variance_.assign(data.n, leaf_variance);
  } else {
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
  double* y = mean_.data() + into * d_;
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
    const double* vl = variances(l);
    const double* vr = variances(r);
    double* v = variances_.data() + into * d_;
    const double dt_l = time_[l] - t;
    const double dt_r = time_[r] - t;
    for (std::size_t j = 0; j < d_; ++j) {
      const double sigma_l = vl[j] + dt_l;
      const double sigma_r = vr[j] + dt_r;
      if (std::isinf(sigma_l) && std::isinf(sigma_r)) {
        v[j] = kInf;
        y[j] = 0.0;
      } else if (std::isinf(sigma_l)) {
        v[j] = sigma_r;
        y[j] = yr[j];
      } else if (std::isinf(sigma_r)) {
        v[j] = sigma_l;
        y[j] = yl[j];
      } else {
        const double s = sigma_l + sigma_r;
        const double diff = yl[j] - yr[j];
        log_z += log_local_likelihood(1.0, diff * diff, s) - 0.5 * (*log_lambda_diagonal_)[j];
        y[j] = (sigma_r / s) * yl[j] + (sigma_l / s) * yr[j];
        v[j] = sigma_l * sigma_r / s;
      }
    }
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
  shared.offset.clear();
  shared.squared_delta.clear();
  shared.log_lambda.clear();
  const double* vl = messages.variances(l);
  const double* vr = messages.variances(r);
  const double* yl = messages.mean(l);
  const double* yr = messages.mean(r);
  const double dt = (messages.time(l) - current_time) + (messages.time(r) - current_time);
  for (std::size_t j = 0; j < messages.dims(); ++j) {
    if (std::isinf(vl[j]) || std::isinf(vr[j])) continue;
    const double diff = yl[j] - yr[j];
    shared.offset.push_back(vl[j] + vr[j] + dt);
    shared.squared_delta.push_back(diff * diff);
    shared.log_lambda.push_back(data.log_lambda_diagonal[j]);
  }
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
