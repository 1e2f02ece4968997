#include "exactness_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

namespace kingman::testing_support {

Summary summarize(const std::vector<double>& values) {
  double mean = 0.0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double squares = 0.0;
  for (double v : values) squares += (v - mean) * (v - mean);
  const double variance = squares / static_cast<double>(values.size() - 1);
  return {mean, std::sqrt(variance / static_cast<double>(values.size()))};
}

void check_against_enumeration(const std::function<FitResult(std::uint64_t seed)>& run_fit,
                               const oracle::Enumeration& exact, const ExactnessRuns& runs,
                               const std::string& label) {
  std::vector<double> evidence_ratio;
  std::map<std::pair<int, int>, std::vector<double>> first_merge;
  std::map<std::string, std::vector<double>> topology;
  for (const auto& [pair, p] : exact.first_merge_posterior) first_merge[pair];
  for (const auto& [shape, p] : exact.topology_posterior) topology[shape];

  for (int run = 0; run < runs.runs; ++run) {
    const FitResult result = run_fit(runs.first_seed + static_cast<std::uint64_t>(run));
    ASSERT_TRUE(result.log_evidence.has_value());
    ASSERT_EQ(result.particles.size(), runs.particles);
    evidence_ratio.push_back(std::exp(*result.log_evidence - exact.log_evidence));
    std::map<std::pair<int, int>, double> merge_weight;
    std::map<std::string, double> topology_weight;
    for (const Particle& particle : result.particles) {
      ASSERT_TRUE(particle.tree.complete());
      const Merge& m = particle.tree.merges.front();
      merge_weight[{static_cast<int>(m.left), static_cast<int>(m.right)}] += particle.weight;
      topology_weight[oracle::canonical_topology(particle.tree)] += particle.weight;
    }
    for (auto& [pair, values] : first_merge) values.push_back(merge_weight[pair]);
    for (auto& [shape, values] : topology) values.push_back(topology_weight[shape]);
    double total = 0.0;
    for (const auto& [shape, w] : topology_weight) total += w;
    EXPECT_NEAR(total, 1.0, 1e-9);
  }

  const Summary z = summarize(evidence_ratio);
  EXPECT_LT(z.standard_error, 0.02) << "too noisy to test";
  EXPECT_NEAR(z.mean, 1.0, 4.0 * z.standard_error)
      << "mean of evidence / exact over " << runs.runs << " runs";
  EXPECT_LT(std::abs(std::log(z.mean)), 0.05);
  double worst_z = std::abs(z.mean - 1.0) / z.standard_error;
  for (const auto& [pair, values] : first_merge) {
    const Summary f = summarize(values);
    const double expected = exact.first_merge_posterior.at(pair);
    EXPECT_LT(f.standard_error, 0.01);
    EXPECT_NEAR(f.mean, expected, 4.0 * f.standard_error + 1e-4)
        << "first merge (" << pair.first << "," << pair.second << ")";
    EXPECT_NEAR(f.mean, expected, 0.03);
    if (f.standard_error > 0)
      worst_z = std::max(worst_z, std::abs(f.mean - expected) / f.standard_error);
  }
  for (const auto& [shape, values] : topology) {
    const Summary f = summarize(values);
    EXPECT_NEAR(f.mean, exact.topology_posterior.at(shape), 4.0 * f.standard_error + 1e-4)
        << "topology " << shape;
  }
  ::testing::Test::RecordProperty(label + "_evidence_ratio_e6",
                                  static_cast<int>(std::round(z.mean * 1e6)));
  ::testing::Test::RecordProperty(label + "_evidence_se_e6",
                                  static_cast<int>(std::round(z.standard_error * 1e6)));
  ::testing::Test::RecordProperty(label + "_worst_z_e3",
                                  static_cast<int>(std::round(worst_z * 1e3)));
}

}  // namespace kingman::testing_support
