// The per-dimension message functions on cluster views (brownian_messages.hpp): the pair
// log-likelihood computed with one log per pair equals the one of the merge itself, with
// dimensions missing on either side, offsets spread over many orders of magnitude and a
// non-identity diagonal Lambda.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kingman/model/brownian_messages.hpp"

namespace kingman {
namespace {

TEST(BrownianViews, PairLogLikelihoodMatchesTheMerge) {
  std::mt19937_64 engine(5);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double inf = std::numeric_limits<double>::infinity();
  for (int trial = 0; trial < 500; ++trial) {
    const std::size_t d = 1 + trial % 40;
    std::vector<double> mean_l(d), mean_r(d), var_l(d), var_r(d), log_lambda(d);
    for (std::size_t j = 0; j < d; ++j) {
      mean_l[j] = 4.0 * unit(engine) - 2.0;
      mean_r[j] = 4.0 * unit(engine) - 2.0;
      var_l[j] = unit(engine) < 0.2 ? inf : std::exp(-30.0 + 40.0 * unit(engine));
      var_r[j] = unit(engine) < 0.2 ? inf : std::exp(-30.0 + 40.0 * unit(engine));
      log_lambda[j] = unit(engine) - 0.5;
    }
    const BrownianClusterView l{mean_l.data(), var_l.data(), -0.3 * unit(engine)};
    const BrownianClusterView r{mean_r.data(), var_r.data(), -0.3 * unit(engine)};
    const double t = std::min(l.time, r.time) - unit(engine);
    std::vector<double> mean(d), variance(d);
    const double merged =
        merge_brownian_clusters(l, r, d, t, log_lambda, mean.data(), variance.data());
    const double pair = log_local_likelihood(l, r, d, t, log_lambda);
    EXPECT_NEAR(pair, merged, 1e-12 * std::max(1.0, std::abs(merged))) << "trial " << trial;
  }
}

}  // namespace
}  // namespace kingman
