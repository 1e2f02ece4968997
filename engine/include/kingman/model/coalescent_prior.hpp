#pragma once
// Kingman's n-coalescent (MODEL.md section 2).
#include <cstddef>

namespace kingman {

// Total merge rate with m live clusters: lambda_m = m(m-1)/2.
inline double coalescent_rate(std::size_t live_clusters) {
  const double m = static_cast<double>(live_clusters);
  return 0.5 * m * (m - 1.0);
}

}  // namespace kingman
