#pragma once
// The diffusion covariance Lambda: construction, whitening, and its MAP given a tree
// (MODEL.md section 8).
#include <Eigen/Core>

#include "kingman/data/table.hpp"
#include "kingman/model/whitened_data.hpp"
#include "kingman/options.hpp"
#include "kingman/tree/merge_tree.hpp"

namespace kingman {

struct Covariance {
  CovarianceKind kind = CovarianceKind::identity;
  Eigen::VectorXd diagonal;  // Lambda's diagonal (all kinds)
  Eigen::MatrixXd cholesky;  // lower-triangular L with Lambda = L L^T (full kind only)

  double log_det() const;
  static Covariance identity(std::size_t d);
};

// Lambda before any tree is known: each column's sample variance (over observed entries),
// pooled or shrunk according to the kind. Under the coalescent the sample variance across
// leaves estimates Lambda times the mean pairwise coalescence time, which is 1.
Covariance initial_covariance(const Table& data, CovarianceKind kind, double shrinkage);

// The MAP of Lambda given a tree, from the independent contrasts c_i ~ N(0, s_i Lambda)
// (MODEL.md section 8). Priors (documented in README): isotropic and diagonal use a weak
// inverse-gamma(1, 1e-6 * pooled variance); full uses an inverse-Wishart(d + 2, 1e-6 * pooled I).
// learned first divides each column by its unit u_j^2 (mean square deviation from the median
// over the entries that deviate: robust to mostly-constant columns, exact under a change of
// units), then gives each column an inverse-gamma MAP whose prior mean is the pooled unit-free
// scale and whose weight is shrinkage * (n-1)/2 pseudo contrasts: columns in different units
// are equalized, and a nearly constant column cannot get a tiny variance and dominate.
Covariance map_covariance(const Table& data, const MergeTree& tree, double leaf_variance,
                          CovarianceKind kind, double shrinkage);

// x~ = L^-1 x for every row; missing entries stay NaN (diagonal kinds only).
WhitenedData whiten(const Table& data, const Covariance& covariance);

}  // namespace kingman
