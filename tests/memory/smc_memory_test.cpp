// An SMC fit within the smallest budget fit() accepts for it (smc_memory_bytes) never holds
// more heap than that budget: with the default resampling it finishes, and without resampling
// (the particles then share no clusters, whose rows grow to O(n) numbers each) it either
// finishes or stops with ResourceError before passing it. Brownian data complete and with
// missing entries, and binary data, every SMC algorithm.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <span>
#include <string>

#include "heap_counter.hpp"
#include "kingman/api.hpp"
#include "kingman/error.hpp"

namespace kingman {
namespace {

enum class Data { complete, missing, binary };

Table table_of(Data kind, std::size_t n, std::size_t d, unsigned seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Table t;
  t.rows = n;
  t.cols = d;
  t.source = "random";
  t.values.resize(n * d);
  for (double& v : t.values) {
    v = normal(engine);
    if (kind == Data::missing && engine() % 10 == 0) v = std::nan("");
    if (kind == Data::binary) v = v > 0.3 ? 1.0 : 0.0;
  }
  return t;
}

// `algorithm` with `particles` on 2 threads, identity covariance, the likelihood of `kind`.
FitOptions options_for(Data kind, Algorithm algorithm, std::size_t particles) {
  FitOptions options;
  options.algorithm = algorithm;
  options.particles = particles;
  options.threads = 2;
  options.brownian.covariance = CovarianceKind::identity;
  if (kind == Data::binary) options.likelihood = Likelihood::binary;
  return options;
}

TEST(SmcMemory, RunsStayWithinTheBudgetTheyAreGranted) {
  const Algorithm brownian[] = {Algorithm::priorprior, Algorithm::priorpost, Algorithm::postpost,
                                Algorithm::mpost1,     Algorithm::mpost2,    Algorithm::race};
  const Algorithm binary[] = {Algorithm::priorprior, Algorithm::priorpost, Algorithm::postpost,
                              Algorithm::race};
  unsigned seed = 20;
  for (Data kind : {Data::complete, Data::missing, Data::binary}) {
    const Table table = table_of(kind, 80, 6, ++seed);
    for (Algorithm algorithm : kind == Data::binary ? std::span<const Algorithm>(binary)
                                                    : std::span<const Algorithm>(brownian)) {
      for (double ess_threshold : {0.5, 0.0}) {
        FitOptions options = options_for(kind, algorithm, 32);
        options.ess_threshold = ess_threshold;
        options.max_memory = smc_memory_bytes(table, options);
        const std::string what = to_string(algorithm) + " on " +
                                 (kind == Data::complete  ? "complete"
                                  : kind == Data::missing ? "missing"
                                                          : "binary") +
                                 " data, ESS threshold " + std::to_string(ess_threshold);
        const std::size_t before = testing_support::live_heap_bytes();
        testing_support::reset_peak_heap_bytes();
        bool finished = true;
        try {
          fit(table, options);
        } catch (const ResourceError& e) {
          finished = false;
          EXPECT_NE(std::string(e.what()).find("--ess-threshold"), std::string::npos) << e.what();
        }
        const std::size_t peak = testing_support::peak_heap_bytes() - before;
        EXPECT_LE(peak, options.max_memory) << what;
        if (ess_threshold > 0.0) {
          EXPECT_TRUE(finished) << what;
        }
      }
    }
  }
}

// Budgets below the step tables' default size (64 MiB each) shrink them instead of counting
// them whole: PostPost with 32 particles on 100 points with missing entries or binary, counted
// at ~45 MB under an ample budget (its shared laws' table), holds ~2 MB. Within 8 MiB it is
// counted below that (~3.5 MB), runs, and holds less.
TEST(SmcMemory, SmallBudgetsShrinkTheStepTables) {
  for (Data kind : {Data::missing, Data::binary}) {
    const Table table = table_of(kind, 100, 10, 7);
    FitOptions options = options_for(kind, Algorithm::postpost, 32);
    const std::size_t budget = std::size_t{8} << 20;
    const std::string what = kind == Data::missing ? "missing" : "binary";
    EXPECT_GT(smc_memory_bytes(table, options), budget) << what << ": the ample budget's count";
    options.max_memory = budget;
    EXPECT_LE(smc_memory_bytes(table, options), budget) << what;
    const std::size_t before = testing_support::live_heap_bytes();
    testing_support::reset_peak_heap_bytes();
    EXPECT_NO_THROW(fit(table, options)) << what;
    EXPECT_LE(testing_support::peak_heap_bytes() - before, budget) << what;
  }
}

// PriorPrior on binary or missing-entry data (the law-proposal system) holds O(n) numbers per
// particle: nothing of the O(m^2) pair scores that PriorPost keeps. (Each of its tasks once
// zeroed a PriorPost buffer of m(m - 1)/2 doubles every step: 9 MB at n = 1 500.)
TEST(SmcMemory, PriorPriorHoldsNoPairScores) {
  const std::size_t n = 1500;
  const double one_buffer = 0.5 * static_cast<double>(n) * static_cast<double>(n - 1) * 8.0;
  for (Data kind : {Data::missing, Data::binary}) {
    const Table table = table_of(kind, n, 6, 11);
    const FitOptions options = options_for(kind, Algorithm::priorprior, 4);
    const std::size_t before = testing_support::live_heap_bytes();
    testing_support::reset_peak_heap_bytes();
    const FitResult result = fit(table, options);
    const double peak = static_cast<double>(testing_support::peak_heap_bytes() - before);
    EXPECT_LT(peak, 0.5 * one_buffer) << (kind == Data::missing ? "missing" : "binary");
    ASSERT_TRUE(result.log_evidence.has_value());
    EXPECT_TRUE(std::isfinite(*result.log_evidence));
  }
}

}  // namespace
}  // namespace kingman
