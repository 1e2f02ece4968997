#include "same_draws.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace kingman::testing_support {

void expect_same_draws(const SmcResult& a, const SmcResult& b, double evidence_tolerance,
                       double height_tolerance) {
  EXPECT_NEAR(b.log_evidence, a.log_evidence, evidence_tolerance);
  EXPECT_EQ(b.resampled_at, a.resampled_at);
  ASSERT_EQ(b.particles.size(), a.particles.size());
  for (std::size_t s = 0; s < a.particles.size(); ++s) {
    const auto& x = a.particles[s].tree.merges;
    const auto& y = b.particles[s].tree.merges;
    ASSERT_EQ(x.size(), y.size());
    for (std::size_t k = 0; k < x.size(); ++k) {
      EXPECT_EQ(x[k].left, y[k].left) << "particle " << s << ", merge " << k;
      EXPECT_EQ(x[k].right, y[k].right) << "particle " << s << ", merge " << k;
      EXPECT_NEAR(x[k].height, y[k].height, height_tolerance * std::abs(x[k].height))
          << "particle " << s << ", merge " << k;
    }
  }
}

}  // namespace kingman::testing_support
