// `kingman fit -a race` through the program as a user runs it: the JSON report lists every
// particle with a complete tree, the linkage and Newick files are written, one, two and four
// threads give identical output, and on 3 and 4 points the evidence and first merges are
// those of exact enumeration (4 seeds of 20000 particles, the tolerances of
// cli_smc_acceptance_test.cpp).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "exact_enumeration.hpp"
#include "run_process.hpp"

namespace kingman {
namespace {

using testing::read_text;
using testing::run_process;
using testing::TempDir;

std::string csv(std::size_t n, std::size_t d, const std::vector<double>& x) {
  std::ostringstream out;
  out.precision(17);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < d; ++j) out << (j ? "," : "") << x[i * d + j];
    out << "\n";
  }
  return out.str();
}

TEST(RaceCli, WritesEveryParticleAndTheSameOutputForAnyThreadCount) {
  TempDir dir;
  std::ostringstream data;
  for (int i = 0; i < 40; ++i)
    data << std::sin(1.3 * i) << "," << std::cos(0.7 * i * i) << "," << 0.1 * (i % 7) << "\n";
  const std::string input = dir.write("d.csv", data.str());
  std::string first;
  for (const char* threads : {"1", "2", "4"}) {
    const std::string json = dir.file(std::string("t") + threads + ".json");
    const auto run =
        run_process(KINGMAN_CLI_PATH, {"fit", input, "-a", "race", "-p", "64", "--seed", "9",
                                       "--threads", threads, "--json", json, "--linkage",
                                       dir.file("l.csv"), "--newick", dir.file("t.nwk")});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    auto report = nlohmann::json::parse(read_text(json));
    EXPECT_EQ(report["algorithm"], "race");
    ASSERT_TRUE(report["log_evidence"].is_number());
    ASSERT_EQ(report["particles"].size(), 64u);
    for (const auto& particle : report["particles"]) {
      ASSERT_EQ(particle["merges"].size(), 39u);
      std::set<int> used;
      for (const auto& merge : particle["merges"]) {
        EXPECT_TRUE(used.insert(merge[0].get<int>()).second);
        EXPECT_TRUE(used.insert(merge[1].get<int>()).second);
      }
    }
    const std::string linkage = read_text(dir.file("l.csv"));
    EXPECT_EQ(std::count(linkage.begin(), linkage.end(), '\n'), 39);
    EXPECT_FALSE(read_text(dir.file("t.nwk")).empty());
    report.erase("seconds");
    report.erase("threads");
    if (first.empty()) {
      first = report.dump();
    } else {
      EXPECT_EQ(report.dump(), first) << threads << " threads";
    }
  }
}

TEST(RaceCli, EvidenceAndFirstMergesMatchEnumeration) {
  struct Points {
    const char* name;
    std::size_t n, d;
    double leaf_variance;
    std::vector<double> x;
  };
  const Points datasets[] = {
      {"three", 3, 2, 0.0, {0, 0, 1, 0.5, 0.3, 2}},
      {"four_noisy", 4, 2, 0.2, {0, 0, 1, 0.5, 0.3, 2, 2.5, 2.2}},
  };
  TempDir dir;
  for (const Points& points : datasets) {
    const std::string input =
        dir.write(std::string(points.name) + ".csv", csv(points.n, points.d, points.x));
    const oracle::Enumeration exact =
        oracle::enumerate_brownian(points.x, points.n, points.d, points.leaf_variance);
    double evidence_sum = 0.0;
    std::map<std::pair<int, int>, double> first_merge;
    for (int seed = 1; seed <= 4; ++seed) {
      const std::string json = dir.file("r.json");
      const auto run = run_process(
          KINGMAN_CLI_PATH, {"fit", input, "-a", "race", "--covariance", "identity",
                             "--leaf-variance", std::to_string(points.leaf_variance), "-p", "20000",
                             "--seed", std::to_string(seed), "--json", json});
      ASSERT_EQ(run.exit_code, 0) << run.err;
      const auto report = nlohmann::json::parse(read_text(json));
      evidence_sum += std::exp(report["log_evidence"].get<double>() - exact.log_evidence);
      for (const auto& particle : report["particles"]) {
        const auto& merge = particle["merges"][0];
        first_merge[{merge[0].get<int>(), merge[1].get<int>()}] +=
            particle["weight"].get<double>() / 4.0;
      }
    }
    SCOPED_TRACE(points.name);
    EXPECT_LT(std::abs(std::log(evidence_sum / 4.0)), 0.05);
    for (const auto& [pair, probability] : exact.first_merge_posterior)
      EXPECT_NEAR(first_merge[pair], probability, 0.03)
          << "(" << pair.first << "," << pair.second << ")";
  }
}

}  // namespace
}  // namespace kingman
