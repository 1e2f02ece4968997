// The SMC proposals on binary data, run through the program exactly as a user would: on 3- and
// 4-point datasets (one with missing entries) with --likelihood binary --equilibrium 0.5
// --mutation-rate 1 -p 20000, for each proposal, the log of the mean evidence estimate over 4
// seeds is within 0.05 of the exact log evidence and the weighted first-merge frequencies are
// within 0.03 of the exact posterior (exact: Felsenstein pruning under enumeration). With 20000
// particles the Monte Carlo error is far below both tolerances (the 4-sigma checks with smaller
// runs are in discrete_smc_exactness_test.cpp). The thread count never changes the output.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "discrete_likelihood.hpp"
#include "exact_enumeration.hpp"
#include "run_process.hpp"

namespace kingman {
namespace {

using testing::read_text;
using testing::run_process;
using testing::TempDir;

struct BinaryPoints {
  const char* name;
  std::size_t n, d;
  std::vector<int> values;  // row-major, -1 = missing
};

std::string csv(const BinaryPoints& p) {
  std::ostringstream out;
  for (std::size_t i = 0; i < p.n; ++i) {
    for (std::size_t j = 0; j < p.d; ++j) {
      const int v = p.values[i * p.d + j];
      out << (j ? "," : "");
      if (v < 0) {
        out << "NA";
      } else {
        out << v;
      }
    }
    out << "\n";
  }
  return out.str();
}

// The model the flags below ask for: q = (1/2, 1/2) and lambda = 1 in every column.
oracle::DiscreteModel model_of(const BinaryPoints& p) {
  oracle::DiscreteModel model;
  model.n = p.n;
  model.d = p.d;
  model.categories = 2;
  model.values = p.values;
  model.equilibrium.assign(2 * p.d, 0.5);
  model.rates.assign(p.d, 1.0);
  return model;
}

TEST(CliDiscreteSmc, EvidenceAndFirstMergesOfEveryProposal) {
  const BinaryPoints datasets[] = {
      {"three", 3, 4, {0, 1, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1}},
      {"four_missing", 4, 3, {0, -1, 1, 0, 1, 0, 1, 0, -1, 1, 1, 0}},
  };
  TempDir dir;
  for (const BinaryPoints& points : datasets) {
    const std::string input = dir.write(std::string(points.name) + ".csv", csv(points));
    const oracle::Enumeration exact = oracle::enumerate_discrete(model_of(points));
    for (const char* proposal : {"priorprior", "priorpost", "postpost", "race"}) {
      double evidence_sum = 0.0;
      std::map<std::pair<int, int>, double> first_merge;
      for (int seed = 1; seed <= 4; ++seed) {
        const std::string json = dir.file("r.json");
        const auto run = run_process(
            KINGMAN_CLI_PATH,
            {"fit", input, "--likelihood", "binary", "--equilibrium", "0.5", "--mutation-rate", "1",
             "-a", proposal, "-p", "20000", "--seed", std::to_string(seed), "--json", json});
        ASSERT_EQ(run.exit_code, 0) << run.err;
        const auto report = nlohmann::json::parse(read_text(json));
        ASSERT_EQ(report["particles"].size(), 20000u);
        ASSERT_EQ(report["ess"].size(), points.n - 1);
        evidence_sum += std::exp(report["log_evidence"].get<double>() - exact.log_evidence);
        for (const auto& particle : report["particles"]) {
          const auto& merge = particle["merges"][0];
          first_merge[{merge[0].get<int>(), merge[1].get<int>()}] +=
              particle["weight"].get<double>() / 4.0;
        }
      }
      SCOPED_TRACE(std::string(points.name) + " " + proposal);
      EXPECT_LT(std::abs(std::log(evidence_sum / 4.0)), 0.05);
      RecordProperty(std::string(points.name) + "_" + proposal + "_log_error_e6",
                     static_cast<int>(std::round(std::log(evidence_sum / 4.0) * 1e6)));
      double worst = 0.0;
      for (const auto& [pair, probability] : exact.first_merge_posterior) {
        EXPECT_NEAR(first_merge[pair], probability, 0.03)
            << "(" << pair.first << "," << pair.second << ")";
        worst = std::max(worst, std::abs(first_merge[pair] - probability));
      }
      RecordProperty(std::string(points.name) + "_" + proposal + "_first_merge_error_e6",
                     static_cast<int>(std::round(worst * 1e6)));
    }
  }
}

TEST(CliDiscreteSmc, OneAndTwoThreadsGiveIdenticalParticles) {
  TempDir dir;
  std::ostringstream data;
  std::uint64_t state = 12345;  // a fixed LCG: about one entry in 7 missing
  // 14 points: PostPost then has more than 64 pairs after the first merge, so it also takes
  // the path that rebuilds the chosen pair's law instead of keeping every law.
  for (int i = 0; i < 14; ++i) {
    for (int j = 0; j < 5; ++j) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      const int v = static_cast<int>((state >> 33) % 7);
      data << (j ? "," : "") << (v == 0 ? "NA" : std::to_string(v % 2));
    }
    data << "\n";
  }
  const std::string input = dir.write("x.csv", data.str());
  for (const char* proposal : {"priorprior", "priorpost", "postpost", "race"}) {
    std::string particles[2];
    for (int threads = 1; threads <= 2; ++threads) {
      std::string name = std::to_string(threads);
      name += "threads.json";
      const std::string json = dir.file(name);
      const auto run = run_process(
          KINGMAN_CLI_PATH, {"fit", input, "--likelihood", "binary", "-a", proposal, "-p", "200",
                             "--seed", "9", "--threads", std::to_string(threads), "--json", json});
      ASSERT_EQ(run.exit_code, 0) << run.err;
      auto report = nlohmann::json::parse(read_text(json));
      EXPECT_EQ(report["threads"], threads);
      EXPECT_FALSE(report["resampled_at"].empty()) << proposal << ": resampling not exercised";
      report.erase("threads");
      report.erase("seconds");
      particles[threads - 1] = report.dump();
    }
    EXPECT_EQ(particles[0], particles[1]) << proposal;
  }
}

// The proposals that need the Brownian model are refused with a usage error.
TEST(CliDiscreteSmc, UnavailableAlgorithmsAreRefused) {
  TempDir dir;
  const std::string input = dir.write("b.csv", "0,1\n1,1\n0,0\n");
  for (const char* algorithm : {"mpost1", "mpost2"}) {
    const auto run =
        run_process(KINGMAN_CLI_PATH, {"fit", input, "--likelihood", "binary", "-a", algorithm});
    EXPECT_EQ(run.exit_code, 2) << algorithm;
    EXPECT_NE(run.err.find("not available"), std::string::npos) << run.err;
  }
}

}  // namespace
}  // namespace kingman
