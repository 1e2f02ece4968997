// The kingman program with the binary / multinomial likelihood: results equal the library's,
// bad categorical input exits 3 with a located message and no output, option misuse exits 2.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <string>

#include "kingman/api.hpp"
#include "run_process.hpp"

namespace kingman {
namespace {

using testing::ProcessResult;
using testing::read_text;
using testing::run_process;
using testing::TempDir;

ProcessResult kingman_cli(const std::vector<std::string>& args) {
  return run_process(KINGMAN_CLI_PATH, args);
}

const char* kBinaryCsv =
    "a,b,c,d\n"
    "0,1,1,0\n"
    "1,1,0,0\n"
    "0,1,,1\n"
    "1,0,0,NA\n"
    "0,0,1,1\n"
    "1,1,1,0\n";

Table binary_table() {
  Table t;
  t.rows = 6;
  t.cols = 4;
  t.source = "binary";
  const double nan = std::nan("");
  t.values = {0, 1, 1, 0, 1, 1, 0, 0, 0, 1, nan, 1, 1, 0, 0, nan, 0, 0, 1, 1, 1, 1, 1, 0};
  return t;
}

TEST(CliDiscrete, GreedyResultsEqualTheLibrary) {
  TempDir dir;
  const std::string input = dir.write("b.csv", kBinaryCsv);
  for (const char* algorithm : {"greedy-rate1", "greedy-minduration", "greedy-maxprob"}) {
    const std::string json_path = dir.file(std::string(algorithm) + ".json");
    const ProcessResult run =
        kingman_cli({"fit", input, "--likelihood", "binary", "-a", algorithm, "--mutation-rate",
                     "0.5,1,2,1", "--equilibrium", "data", "--json", json_path});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto report = nlohmann::json::parse(read_text(json_path));
    FitOptions options;
    options.algorithm = parse_algorithm(algorithm);
    options.likelihood = Likelihood::binary;
    options.discrete.mutation_rates = {0.5, 1, 2, 1};
    const FitResult expected = fit(binary_table(), options);
    EXPECT_DOUBLE_EQ(report["log_joint"].get<double>(), expected.log_joint) << algorithm;
    const auto& merges = report["particles"][0]["merges"];
    ASSERT_EQ(merges.size(), 5u);
    for (std::size_t k = 0; k < 5; ++k) {
      EXPECT_EQ(merges[k][0].get<std::size_t>(), expected.best_tree().merges[k].left);
      EXPECT_EQ(merges[k][1].get<std::size_t>(), expected.best_tree().merges[k].right);
      EXPECT_DOUBLE_EQ(merges[k][2].get<double>(), expected.best_tree().merges[k].height);
    }
  }
  const ProcessResult multinomial =
      kingman_cli({"fit", input, "--likelihood", "multinomial", "--categories", "3",
                   "--equilibrium", "uniform", "--newick", "-"});
  EXPECT_EQ(multinomial.exit_code, 0) << multinomial.err;
  EXPECT_NE(multinomial.out.find(';'), std::string::npos);
}

TEST(CliDiscrete, BadBinaryInputExitsThreeWithALocatedMessageAndNoOutput) {
  TempDir dir;
  const struct {
    const char* csv;
    const char* where;
  } cases[] = {
      {"a,b\n0,1\n1,2\n0,0\n", "data row 2, column 2 (b)"},
      {"0,1\n1,0.5\n0,0\n", "data row 2, column 2"},
      {"0,1\n1,1\n-1,0\n", "data row 3, column 1"},
  };
  for (const auto& c : cases) {
    const std::string input = dir.write("bad.csv", c.csv);
    const std::string json_path = dir.file("out.json");
    const ProcessResult run =
        kingman_cli({"fit", input, "--likelihood", "binary", "--json", json_path});
    EXPECT_EQ(run.exit_code, 3) << run.err;
    EXPECT_NE(run.err.find(c.where), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("bad.csv"), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << "one line: " << run.err;
    EXPECT_FALSE(std::filesystem::exists(json_path));
  }
}

TEST(CliDiscrete, OptionMisuseExitsTwo) {
  TempDir dir;
  const std::string input = dir.write("b.csv", kBinaryCsv);
  const std::vector<std::vector<std::string>> cases = {
      {"--likelihood", "poisson"},
      {"--likelihood", "binary", "--equilibrium", "1.5"},
      {"--likelihood", "binary", "--equilibrium", "often"},
      {"--likelihood", "binary", "--mutation-rate", "1,2"},
      {"--likelihood", "binary", "--mutation-rate", "-1"},
      {"--likelihood", "binary", "--categories", "3"},
      {"--likelihood", "binary", "-a", "mgreedy"},
      {"--likelihood", "binary", "-a", "mpost2"},
      {"--likelihood", "binary", "-a", "mpost1"},
      {"--likelihood", "binary", "--leaf-variance", "0.1"},
      {"--mutation-rate", "2"},
  };
  for (const auto& extra : cases) {
    std::vector<std::string> args = {"fit", input};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult run = kingman_cli(args);
    std::string joined;
    for (const auto& a : extra) joined += a + " ";
    EXPECT_EQ(run.exit_code, 2) << joined << ": " << run.err;
    EXPECT_FALSE(run.err.empty()) << joined;
  }
}

}  // namespace
}  // namespace kingman
