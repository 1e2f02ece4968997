#pragma once
// LogProduct: shared by the discrete model's per-column products and the Brownian model's
// per-dimension ones.
#include <cmath>

namespace kingman {

// The log of a product of many factors >= 0 (a pair's Z^d over its columns, its s_j over its
// dimensions), with one log per ~300 orders of magnitude instead of one per factor: factors are
// multiplied while the product stays in [1e-150, 1e150] and folded into the log when it leaves; a
// factor outside [1e-100, 1e100] goes into the log on its own (0 makes it -inf).
class LogProduct {
 public:
  void multiply(double factor) {
    if (factor > 1e-100 && factor < 1e100) {
      product_ *= factor;
      if (product_ > 1e-150 && product_ < 1e150) return;
      factor = product_;
      product_ = 1.0;
    }
    log_ += std::log(factor);
  }
  double log() const { return log_ + std::log(product_); }

 private:
  double product_ = 1.0, log_ = 0.0;
};

}  // namespace kingman
