// PostPost on complete Brownian data leaves out the pairs whose masses cannot matter, by an
// upper bound on each (proposals.cpp, SmcOptions::skip_negligible_pairs): whole runs must agree
// with and without, on 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>

#include "kingman/inference/smc.hpp"
#include "random_whitened.hpp"
#include "same_draws.hpp"

namespace kingman {
namespace {

// Three clusters 12 apart in 5 dimensions, so that most pairs' masses are far below the
// total's rounding (70 % of the state-pairs are left out); leaf variance 0 (every pair's offset is
// 0 at the first step, where no bound applies) and 0.2.
TEST(NegligiblePairs, PostPostRunsAgreeWithAndWithout) {
  WhitenedData data = testing_support::random_whitened(36, 5, 21);
  for (std::size_t i = 0; i < data.n; ++i)
    for (std::size_t j = 0; j < data.d; ++j) data.x[i * data.d + j] += 12.0 * (i % 3 == j);
  for (const double leaf_variance : {0.0, 0.2}) {
    SCOPED_TRACE(leaf_variance);
    SmcOptions options;
    options.proposal = Algorithm::postpost;
    options.particles = 24;
    options.seed = 6;
    options.threads = 1;
    options.skip_negligible_pairs = false;
    const SmcResult all = run_smc(data, leaf_variance, options);
    options.skip_negligible_pairs = true;
    const SmcResult skipping = run_smc(data, leaf_variance, options);
    options.threads = 2;
    const SmcResult two_threads = run_smc(data, leaf_variance, options);
    testing_support::expect_same_draws(all, skipping, 1e-12 * std::abs(all.log_evidence), 1e-12);
    ASSERT_EQ(two_threads.particles.size(), skipping.particles.size());
    for (std::size_t s = 0; s < all.particles.size(); ++s)
      EXPECT_EQ(two_threads.particles[s].log_weight, skipping.particles[s].log_weight);
    EXPECT_EQ(two_threads.log_evidence, skipping.log_evidence);
  }
}

}  // namespace
}  // namespace kingman
