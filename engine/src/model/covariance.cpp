#include "kingman/model/covariance.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kingman/error.hpp"
#include "kingman/model/brownian_messages.hpp"

namespace kingman {

namespace {

// Column means and sample variances over observed entries.
struct ColumnMoments {
  Eigen::VectorXd mean, variance;
  Eigen::VectorXd observed;  // count per column
};

ColumnMoments column_moments(const Table& data) {
  const auto d = static_cast<Eigen::Index>(data.cols);
  ColumnMoments m{Eigen::VectorXd::Zero(d), Eigen::VectorXd::Zero(d), Eigen::VectorXd::Zero(d)};
  for (std::size_t i = 0; i < data.rows; ++i)
    for (std::size_t j = 0; j < data.cols; ++j)
      if (!data.missing(i, j)) {
        m.mean[j] += data.at(i, j);
        m.observed[j] += 1;
      }
  for (Eigen::Index j = 0; j < d; ++j) m.mean[j] /= std::max(m.observed[j], 1.0);
  for (std::size_t i = 0; i < data.rows; ++i)
    for (std::size_t j = 0; j < data.cols; ++j)
      if (!data.missing(i, j)) {
        const double diff = data.at(i, j) - m.mean[j];
        m.variance[j] += diff * diff;
      }
  for (Eigen::Index j = 0; j < d; ++j)
    m.variance[j] = m.observed[j] > 1 ? m.variance[j] / (m.observed[j] - 1) : 0.0;
  return m;
}

double inverse_gamma_map(double alpha, double beta, double sum_squares, double count);

// Squared unit of each column for the learned kind: the mean square deviation from the column
// median over the entries that deviate from it. Unlike the variance it is not made tiny by a
// column that is mostly constant (a border pixel), yet it follows a change of units exactly,
// so the learned covariance is invariant to rescaling any column.
Eigen::VectorXd squared_units(const Table& data) {
  Eigen::VectorXd units = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(data.cols));
  std::vector<double> column;
  for (std::size_t j = 0; j < data.cols; ++j) {
    column.clear();
    for (std::size_t i = 0; i < data.rows; ++i)
      if (!data.missing(i, j)) column.push_back(data.at(i, j));
    if (column.empty()) continue;
    const auto middle = column.begin() + static_cast<std::ptrdiff_t>(column.size() / 2);
    std::nth_element(column.begin(), middle, column.end());
    const double median = *middle;
    double sum_squares = 0.0;
    std::size_t deviating = 0;
    for (double v : column)
      if (v != median) {
        sum_squares += (v - median) * (v - median);
        ++deviating;
      }
    if (deviating > 0) units[static_cast<Eigen::Index>(j)] = sum_squares / deviating;
  }
  return units;
}

// Learned kind: per-column scales in units of squared_units, each an inverse-gamma MAP shrunk
// toward the pooled (shared) scale with a prior worth shrinkage * (n-1)/2 observations.
Eigen::VectorXd shrunk_scales(const Eigen::VectorXd& units, const Eigen::VectorXd& sum_squares,
                              const Eigen::VectorXd& count, double shrinkage, std::size_t rows) {
  const Eigen::VectorXd unit_free = sum_squares.cwiseQuotient(units);
  const double total = count.sum();
  const double pooled = total > 0 && unit_free.sum() > 0 ? unit_free.sum() / total : 1.0;
  const double alpha = shrinkage * 0.5 * static_cast<double>(rows - 1);
  Eigen::VectorXd scales(units.size());
  for (Eigen::Index j = 0; j < units.size(); ++j)
    scales[j] = units[j] * inverse_gamma_map(alpha, alpha * pooled, unit_free[j], count[j]);
  return scales;
}

// Mean of the positive entries (1 if there are none): the shared scale that degenerate
// columns fall back to.
double pooled_scale(const Eigen::VectorXd& per_column) {
  double sum = 0.0;
  int count = 0;
  for (double v : per_column)
    if (v > 0) {
      sum += v;
      ++count;
    }
  return count > 0 ? sum / count : 1.0;
}

void require_complete(const Table& data, CovarianceKind kind) {
  if (kind == CovarianceKind::full && data.has_missing()) {
    throw OptionError("--covariance full needs complete data, but " + data.source +
                      " has missing entries; use learned, diagonal, isotropic or identity");
  }
}

// The inverse-gamma MAP used by the diagonal kinds: (beta + S/2) / (alpha + 1 + N/2).
double inverse_gamma_map(double alpha, double beta, double sum_squares, double count) {
  return (beta + 0.5 * sum_squares) / (alpha + 1.0 + 0.5 * count);
}

Covariance diagonal_covariance(CovarianceKind kind, Eigen::VectorXd diagonal) {
  Covariance c;
  c.kind = kind;
  c.diagonal = std::move(diagonal);
  return c;
}

// Sufficient statistics of the contrasts of a tree: per column sum c^2/s and count, and for
// the full kind sum c c^T / s.
struct ContrastSums {
  Eigen::VectorXd sum_squares, count;
  Eigen::MatrixXd outer;  // full kind only
};

ContrastSums contrast_sums(const Table& data, const MergeTree& tree, double leaf_variance,
                           bool want_outer) {
  validate(tree);
  const std::size_t d = data.cols;
  WhitenedData raw;
  raw.n = data.rows;
  raw.d = d;
  raw.x = data.values;
  raw.has_missing = data.has_missing();
  raw.log_lambda_diagonal.assign(d, 0.0);
  BrownianMessages messages(raw, leaf_variance);
  ContrastSums sums{Eigen::VectorXd::Zero(d), Eigen::VectorXd::Zero(d), Eigen::MatrixXd()};
  if (want_outer) sums.outer = Eigen::MatrixXd::Zero(d, d);
  std::vector<std::size_t> slot_of(tree.node_count());
  for (std::size_t i = 0; i < tree.leaf_count; ++i) slot_of[i] = i;
  Eigen::VectorXd difference(d), scale(d);
  for (std::size_t k = 0; k < tree.merges.size(); ++k) {
    const Merge& merge = tree.merges[k];
    const std::size_t l = slot_of[merge.left], r = slot_of[merge.right];
    const double t = -merge.height;
    messages.contrast(l, r, t, difference.data(), scale.data());
    for (std::size_t j = 0; j < d; ++j) {
      if (std::isinf(scale[j]) || !(scale[j] > 0)) continue;
      sums.sum_squares[j] += difference[j] * difference[j] / scale[j];
      sums.count[j] += 1;
    }
    if (want_outer && scale[0] > 0) sums.outer += difference * difference.transpose() / scale[0];
    messages.merge(l, r, t, l);
    slot_of[tree.leaf_count + k] = l;
  }
  return sums;
}

}  // namespace

double Covariance::log_det() const {
  if (kind == CovarianceKind::full) return 2.0 * cholesky.diagonal().array().log().sum();
  return diagonal.array().log().sum();
}

Covariance Covariance::identity(std::size_t d) {
  return diagonal_covariance(CovarianceKind::identity,
                             Eigen::VectorXd::Ones(static_cast<Eigen::Index>(d)));
}

Covariance initial_covariance(const Table& data, CovarianceKind kind, double shrinkage) {
  require_complete(data, kind);
  const std::size_t d = data.cols;
  if (kind == CovarianceKind::identity) return Covariance::identity(d);
  const ColumnMoments moments = column_moments(data);
  const double pooled = pooled_scale(moments.variance);
  const auto dims = static_cast<Eigen::Index>(d);
  switch (kind) {
    case CovarianceKind::isotropic:
      return diagonal_covariance(kind, Eigen::VectorXd::Constant(dims, pooled));
    case CovarianceKind::diagonal: {
      Eigen::VectorXd diag = moments.variance;
      for (double& v : diag)
        if (!(v > 0)) v = pooled;
      return diagonal_covariance(kind, diag);
    }
    case CovarianceKind::learned: {
      Eigen::VectorXd count(dims), sum_squares(dims);
      for (Eigen::Index j = 0; j < dims; ++j) {
        count[j] = std::max(moments.observed[j] - 1.0, 0.0);
        sum_squares[j] = moments.variance[j] * count[j];
      }
      return diagonal_covariance(
          kind, shrunk_scales(squared_units(data), sum_squares, count, shrinkage, data.rows));
    }
    case CovarianceKind::full: {
      Eigen::MatrixXd sample = Eigen::MatrixXd::Zero(dims, dims);
      Eigen::VectorXd row(dims);
      for (std::size_t i = 0; i < data.rows; ++i) {
        for (Eigen::Index j = 0; j < dims; ++j) row[j] = data.at(i, j) - moments.mean[j];
        sample += row * row.transpose();
      }
      sample /= static_cast<double>(data.rows - 1);
      sample.diagonal().array() += 1e-6 * pooled;
      Covariance c;
      c.kind = kind;
      c.cholesky = Eigen::LLT<Eigen::MatrixXd>(sample).matrixL();
      c.diagonal = sample.diagonal();
      return c;
    }
    default:
      return Covariance::identity(d);
  }
}

Covariance map_covariance(const Table& data, const MergeTree& tree, double leaf_variance,
                          CovarianceKind kind, double shrinkage) {
  require_complete(data, kind);
  const std::size_t d = data.cols;
  if (kind == CovarianceKind::identity) return Covariance::identity(d);
  const bool full = kind == CovarianceKind::full;
  const ContrastSums sums = contrast_sums(data, tree, leaf_variance, full);
  const auto dims = static_cast<Eigen::Index>(d);
  const double total_count = sums.count.sum();
  const double pooled = total_count > 0 ? sums.sum_squares.sum() / total_count : 1.0;
  const double weak_alpha = 1.0, weak_beta = 1e-6 * (pooled > 0 ? pooled : 1.0);
  switch (kind) {
    case CovarianceKind::isotropic:
      return diagonal_covariance(
          kind,
          Eigen::VectorXd::Constant(
              dims, inverse_gamma_map(weak_alpha, weak_beta, sums.sum_squares.sum(), total_count)));
    case CovarianceKind::diagonal: {
      Eigen::VectorXd diag(dims);
      for (Eigen::Index j = 0; j < dims; ++j)
        diag[j] = inverse_gamma_map(weak_alpha, weak_beta, sums.sum_squares[j], sums.count[j]);
      return diagonal_covariance(kind, diag);
    }
    case CovarianceKind::learned:
      return diagonal_covariance(kind, shrunk_scales(squared_units(data), sums.sum_squares,
                                                     sums.count, shrinkage, data.rows));
    case CovarianceKind::full: {
      const double nu0 = static_cast<double>(d) + 2.0;
      Eigen::MatrixXd psi = sums.outer;
      psi.diagonal().array() += weak_beta;
      psi /= nu0 + total_count / static_cast<double>(d) + static_cast<double>(d) + 1.0;
      Covariance c;
      c.kind = kind;
      c.cholesky = Eigen::LLT<Eigen::MatrixXd>(psi).matrixL();
      c.diagonal = psi.diagonal();
      return c;
    }
    default:
      return Covariance::identity(d);
  }
}

WhitenedData whiten(const Table& data, const Covariance& covariance) {
  WhitenedData out;
  out.n = data.rows;
  out.d = data.cols;
  out.has_missing = data.has_missing();
  out.x.resize(data.values.size());
  const auto dims = static_cast<Eigen::Index>(data.cols);
  if (covariance.kind == CovarianceKind::identity) {
    // Data used exactly as given: no centering, so results match hand computations bit for bit.
    out.x = data.values;
    out.log_lambda_diagonal.assign(data.cols, 0.0);
    out.log_det_lambda = 0.0;
    return out;
  }
  // Centering first keeps constant columns exactly zero however small their scale.
  const ColumnMoments moments = column_moments(data);
  if (covariance.kind == CovarianceKind::full) {
    require_complete(data, covariance.kind);
    Eigen::VectorXd row(dims);
    for (std::size_t i = 0; i < data.rows; ++i) {
      for (Eigen::Index j = 0; j < dims; ++j) row[j] = data.at(i, j) - moments.mean[j];
      covariance.cholesky.triangularView<Eigen::Lower>().solveInPlace(row);
      for (Eigen::Index j = 0; j < dims; ++j) out.x[i * data.cols + j] = row[j];
    }
    out.log_lambda_diagonal = std::vector<double>(data.cols, 0.0);
  } else {
    out.log_lambda_diagonal.resize(data.cols);
    for (Eigen::Index j = 0; j < dims; ++j) {
      if (!(covariance.diagonal[j] > 0) || !std::isfinite(covariance.diagonal[j])) {
        throw NumericalError("covariance entry for column " + std::to_string(j + 1) +
                             " is not a positive finite number");
      }
      out.log_lambda_diagonal[j] = std::log(covariance.diagonal[j]);
    }
    for (std::size_t i = 0; i < data.rows; ++i)
      for (std::size_t j = 0; j < data.cols; ++j) {
        const double v = data.at(i, j);
        out.x[i * data.cols + j] = std::isnan(v)
                                       ? v
                                       : (v - moments.mean[static_cast<Eigen::Index>(j)]) /
                                             std::sqrt(covariance.diagonal[j]);
      }
  }
  out.log_det_lambda = covariance.log_det();
  return out;
}

}  // namespace kingman
