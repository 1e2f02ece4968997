// PostPost's pair laws shared by the states of a step (step_pair_laws.hpp): a state's mass read
// off the law built at a later state's time must be the mass of its own law, also where the
// times lie far apart (upper masses deep in the tail); only pairs that several states list are
// served, and a step of one state shares nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <memory>
#include <random>
#include <vector>

#include "../../engine/src/inference/smc/step_pair_laws.hpp"
#include "../../engine/src/model/brownian_duration_law.hpp"
#include "kingman/inference/smc.hpp"
#include "kingman/model/brownian_messages.hpp"
#include "random_whitened.hpp"
#include "same_draws.hpp"

namespace kingman {
namespace {

// A cluster with per-dimension messages, as the missing-data SMC's.
struct Cluster {
  std::vector<double> mean, variance;
  double time = 0.0;
  BrownianClusterView view() const { return {mean.data(), variance.data(), time}; }
};

// The parts of MissingProposalModel that StepPairLaws uses: the closed form where the pair's
// offsets coincide, the adaptive law elsewhere.
class BrownianPairModel {
 public:
  using Node = Cluster;
  using Law = BrownianDurationLaw;
  struct Scratch {
    SharedDimensions shared;
  };

  explicit BrownianPairModel(std::size_t dims) : log_lambda_(dims, 0.0) {}

  bool needs_law(Scratch& scratch, const Node& a, const Node& b, double time) const {
    shared(a, b, time, scratch);
    return !has_one_offset(scratch.shared);
  }

  void build_law(Scratch& scratch, const Node& a, const Node& b, double lambda, double time,
                 Law& law) const {
    shared(a, b, time, scratch);
    law.assign(scratch.shared, lambda, time);
  }

  // A state's own mass, as the SMC computes it without the shared laws.
  double log_mass(Scratch& scratch, const Node& a, const Node& b, double lambda, double time,
                  Law& law, bool& built) const {
    shared(a, b, time, scratch);
    const double closed = single_offset_log_mass(scratch.shared, lambda);
    built = std::isnan(closed);
    if (!built) return closed;
    law.assign(scratch.shared, lambda, time);
    return law.log_mass();
  }

 private:
  void shared(const Node& a, const Node& b, double time, Scratch& scratch) const {
    shared_dimensions(a.view(), b.view(), log_lambda_.size(), time, log_lambda_, scratch.shared);
  }

  std::vector<double> log_lambda_;
};

struct State {
  std::vector<const Cluster*> live;
  double time = 0.0;
};

// `count` clusters in `dims` dimensions, a third of the entries unobserved and the variances
// differing by dimension (so that most pairs have several offsets), made at times in [-1, 0].
std::vector<std::unique_ptr<Cluster>> random_clusters(std::size_t count, std::size_t dims,
                                                      unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform;
  std::vector<std::unique_ptr<Cluster>> clusters;
  for (std::size_t c = 0; c < count; ++c) {
    auto cluster = std::make_unique<Cluster>();
    cluster->time = -uniform(rng);
    for (std::size_t j = 0; j < dims; ++j) {
      const bool observed = uniform(rng) > 1.0 / 3.0 || j == 0;  // every pair shares j = 0
      cluster->mean.push_back(observed ? normal(rng) : 0.0);
      cluster->variance.push_back(observed ? 0.05 + uniform(rng) : INFINITY);
    }
    clusters.push_back(std::move(cluster));
  }
  return clusters;
}

// Four states listing overlapping subsets of 14 clusters, at times from just below their
// clusters' to several time units earlier: every mass served must match the state's own.
void expect_shared_masses_match(double lambda) {
  const std::size_t dims = 5;
  const auto clusters = random_clusters(14, dims, 7);
  const BrownianPairModel model(dims);
  // Lists: 0..9, 2..11, 4..13, and an every-other subset.
  std::vector<State> states(4);
  for (std::size_t c = 0; c < 10; ++c) states[0].live.push_back(clusters[c].get());
  for (std::size_t c = 2; c < 12; ++c) states[1].live.push_back(clusters[c].get());
  for (std::size_t c = 4; c < 14; ++c) states[2].live.push_back(clusters[c].get());
  for (std::size_t c = 0; c < 14; c += 2) states[3].live.push_back(clusters[c].get());
  // Below every cluster's time (at most 0, at least -1): the latest state at -1, the others up
  // to 6 time units earlier, where e^{-lambda Delta} puts their masses deep in the latest law's
  // tail.
  const double times[4] = {-1.0, -1.3, -4.0, -7.0};
  std::vector<const State*> distinct;
  for (std::size_t g = 0; g < states.size(); ++g) {
    states[g].time = times[g];
    distinct.push_back(&states[g]);
  }
  detail::StepPairLaws<BrownianPairModel> laws(SmcOptions{}.step_table_bytes);
  ASSERT_TRUE(laws.prepare(model, std::span<const State* const>(distinct), lambda));
  EXPECT_GT(laws.shared_laws(), 0u);
  std::size_t served = 0, not_served = 0;
  BrownianPairModel::Scratch scratch;
  BrownianDurationLaw own_law;
  for (std::size_t g = 0; g < states.size(); ++g) {
    const State& state = states[g];
    for (std::size_t x = 0; x < state.live.size(); ++x) {
      for (std::size_t y = x + 1; y < state.live.size(); ++y) {
        bool built = false;
        const double own = model.log_mass(scratch, *state.live[x], *state.live[y], lambda,
                                          state.time, own_law, built);
        double shared = 0.0;
        if (!laws.log_mass(g, x, y, state.time, shared)) {
          ++not_served;
          continue;
        }
        ++served;
        // The laws' masses and upper masses are good to ~2e-13 relative
        // (adaptive_duration_law.hpp): the logs agree to that.
        EXPECT_NEAR(shared, own, 1e-12 * std::max(1.0, std::abs(own)))
            << "state " << g << ", pair (" << x << ", " << y << "), lambda " << lambda;
        EXPECT_TRUE(built) << "served pairs are those without a closed form";
      }
    }
  }
  EXPECT_GT(served, 60u);
  EXPECT_GT(not_served, 0u);  // pairs that one state lists, and closed forms
}

TEST(StepPairLaws, SharedMassesAreTheStatesOwn) {
  expect_shared_masses_match(1.0);   // the race's rate: wide laws
  expect_shared_masses_match(45.0);  // a step with ten live clusters: masses e^-270 in the tail
}

// A cluster pair that only one state lists is computed by that state; one state alone shares
// nothing.
TEST(StepPairLaws, ServesOnlyPairsThatSeveralStatesList) {
  const std::size_t dims = 4;
  const auto clusters = random_clusters(5, dims, 11);
  const BrownianPairModel model(dims);
  State first, second;
  first.live = {clusters[0].get(), clusters[1].get(), clusters[2].get()};
  second.live = {clusters[0].get(), clusters[1].get(), clusters[3].get(), clusters[4].get()};
  first.time = second.time = -1.0;
  detail::StepPairLaws<BrownianPairModel> laws(SmcOptions{}.step_table_bytes);
  const std::vector<const State*> one = {&first};
  EXPECT_FALSE(laws.prepare(model, std::span<const State* const>(one), 2.0));
  double mass = 0.0;
  EXPECT_FALSE(laws.log_mass(0, 0, 1, first.time, mass));
  const std::vector<const State*> two = {&first, &second};
  ASSERT_TRUE(laws.prepare(model, std::span<const State* const>(two), 2.0));
  // Only clusters 0 and 1 are listed by both: their pair at most.
  EXPECT_LE(laws.shared_laws(), 1u);
  EXPECT_FALSE(laws.log_mass(0, 0, 2, first.time, mass));
  EXPECT_FALSE(laws.log_mass(1, 2, 3, second.time, mass));
  // Tables beyond their budget: the step shares nothing.
  detail::StepPairLaws<BrownianPairModel> small(detail::StepPairLaws<BrownianPairModel>::kLawBytes);
  EXPECT_FALSE(small.prepare(model, std::span<const State* const>(two), 2.0));
  EXPECT_FALSE(small.log_mass(0, 0, 1, first.time, mass));
}

// Whole PostPost runs on data with missing entries, with the shared laws and the pairs left
// out by their bounds (SmcOptions::share_pair_laws, skip_negligible_pairs) and without: three
// clusters 12 apart, so that most pairs' masses cannot matter (71 % of the state-pairs are left
// out). The same merges, heights and evidence to the laws' accuracy, on 1 and 2 threads, and
// with step tables of 4 KiB (SmcOptions::step_table_bytes: the states scored one at a time, no
// pairs left out, few laws shared).
TEST(StepPairLaws, PostPostRunsAgreeWithAndWithout) {
  WhitenedData data = testing_support::random_whitened(30, 4, 13);
  for (std::size_t i = 0; i < data.n; ++i)
    for (std::size_t j = 0; j < data.d; ++j) data.x[i * data.d + j] += 12.0 * (i % 3 == j);
  for (std::size_t k = 1; k < data.x.size(); k += 7) data.x[k] = std::nan("");
  data.has_missing = true;
  SmcOptions options;
  options.proposal = Algorithm::postpost;
  options.particles = 24;
  options.seed = 4;
  options.threads = 1;
  options.share_pair_laws = false;
  options.skip_negligible_pairs = false;
  const SmcResult own = run_smc(data, 0.1, options);
  options.share_pair_laws = true;
  options.skip_negligible_pairs = true;
  const SmcResult shared = run_smc(data, 0.1, options);
  options.threads = 2;
  const SmcResult two_threads = run_smc(data, 0.1, options);
  options.threads = 1;
  options.step_table_bytes = 4096;
  const SmcResult small_tables = run_smc(data, 0.1, options);
  testing_support::expect_same_draws(own, shared, 1e-11 * std::abs(own.log_evidence), 1e-12);
  testing_support::expect_same_draws(own, small_tables, 1e-11 * std::abs(own.log_evidence), 1e-12);
  ASSERT_EQ(two_threads.particles.size(), shared.particles.size());
  for (std::size_t s = 0; s < own.particles.size(); ++s)
    EXPECT_EQ(two_threads.particles[s].log_weight, shared.particles[s].log_weight);
  EXPECT_EQ(two_threads.log_evidence, shared.log_evidence);
}

}  // namespace
}  // namespace kingman
