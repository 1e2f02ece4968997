#pragma once
// Data in whitened coordinates x~ = L^-1 x (Lambda = L L^T, MODEL.md section 3.1): with this,
// every message mean is a weighted average of whitened leaves and every epsilon is a squared
// Euclidean distance, so the inference code never sees Lambda again.
#include <cstddef>
#include <vector>

namespace kingman {

struct WhitenedData {
  std::size_t n = 0;                        // points
  std::size_t d = 0;                        // dimensions
  std::vector<double> x;                    // row-major n*d whitened values; NaN = missing
  bool has_missing = false;                 // any NaN in x (forces per-dimension message variances)
  std::vector<double> log_lambda_diagonal;  // log Lambda_jj (diagonal kinds; per-dim log det)
  double log_det_lambda = 0.0;              // log |Lambda|

  const double* row(std::size_t i) const { return x.data() + i * d; }
};

}  // namespace kingman
