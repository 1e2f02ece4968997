// The kingman program end to end: exact greedy results through the CLI contract, bad input
// handling (exit status, message, no output file), usage errors and repeatability.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>

#include "brute_force_greedy.hpp"
#include "kingman/kernels/simd_level.hpp"
#include "kingman/tree/linkage.hpp"
#include "kingman/tree/newick.hpp"
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

std::string csv_of(const std::vector<double>& x, std::size_t n, std::size_t d) {
  std::ostringstream out;
  out.precision(17);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < d; ++j) out << (j ? "," : "") << x[i * d + j];
    out << "\n";
  }
  return out.str();
}

std::vector<double> random_points(std::size_t n, std::size_t d, unsigned seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal;
  std::vector<double> x(n * d);
  for (double& v : x) v = normal(engine);
  return x;
}

TEST(CliFit, ExactGreedyResultsForAllFourVariants) {
  const std::pair<const char*, oracle::Variant> variants[] = {
      {"greedy-rate1", oracle::Variant::rate1},
      {"greedy-minduration", oracle::Variant::minduration},
      {"greedy-maxprob", oracle::Variant::maxprob},
      {"mgreedy", oracle::Variant::mgreedy},
  };
  TempDir dir;
  const std::size_t n = 30, d = 3;
  const std::vector<double> x = random_points(n, d, 42);
  const std::string input = dir.write("X.csv", csv_of(x, n, d));
  for (const auto& [name, variant] : variants) {
    const std::string json_path = dir.file(std::string(name) + ".json");
    const ProcessResult run = kingman_cli({"fit", input, "-a", name, "--covariance", "identity",
                                           "--leaf-variance", "0", "--json", json_path});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto report = nlohmann::json::parse(read_text(json_path));
    const auto reference = oracle::brute_force_greedy(x, n, d, 0.0, variant);
    EXPECT_EQ(report["algorithm"], name);
    EXPECT_TRUE(report["log_evidence"].is_null());
    const double log_joint = report["log_joint"];
    EXPECT_NEAR(log_joint, reference.log_joint, 1e-6 * std::abs(reference.log_joint)) << name;
    const auto& merges = report["particles"][0]["merges"];
    ASSERT_EQ(merges.size(), n - 1);
    for (std::size_t k = 0; k + 1 < n; ++k) {
      EXPECT_EQ(merges[k][0].get<std::size_t>(), reference.tree.merges[k].left) << name << k;
      EXPECT_EQ(merges[k][1].get<std::size_t>(), reference.tree.merges[k].right) << name << k;
      EXPECT_NEAR(merges[k][2].get<double>(), reference.tree.merges[k].height,
                  1e-6 * reference.tree.merges[k].height)
          << name << k;
    }
    EXPECT_EQ(report["particles"][0]["weight"], 1.0);
  }
}

TEST(CliFit, OutputsAgreeWithEachOther) {
  TempDir dir;
  const std::string input = dir.write("X.tsv",
                                      "id\ta\tb\n"
                                      "p\t0\t1\n"
                                      "q\t0.1\t1.2\n"
                                      "r\t3\t-1\n"
                                      "s\t2.5\t-1.5\n"
                                      "t\t9\t9\n");
  const ProcessResult run = kingman_cli({"fit", input, "--newick", dir.file("t.nwk"), "--linkage",
                                         dir.file("t.csv"), "--json", dir.file("t.json")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const MergeTree from_linkage = read_linkage_csv(dir.file("t.csv"));
  const ParsedNewick parsed = parse_newick(read_text(dir.file("t.nwk")), {"p", "q", "r", "s", "t"});
  ASSERT_EQ(from_linkage.merges.size(), 4u);
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(parsed.tree.merges[k].left, from_linkage.merges[k].left);
    EXPECT_EQ(parsed.tree.merges[k].right, from_linkage.merges[k].right);
    EXPECT_NEAR(parsed.tree.merges[k].height, from_linkage.merges[k].height,
                1e-12 * from_linkage.merges[k].height);
  }
  const auto report = nlohmann::json::parse(read_text(dir.file("t.json")));
  EXPECT_EQ(report["n"], 5);
  EXPECT_EQ(report["d"], 2);
}

TEST(CliFit, NewickOnStdoutByDefault) {
  TempDir dir;
  const std::string input = dir.write("X.csv", "1,2\n3,4\n5,7\n");
  const ProcessResult run = kingman_cli({"fit", input});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.back(), '\n');
  EXPECT_NE(run.out.find(';'), std::string::npos);
  EXPECT_TRUE(run.err.empty()) << run.err;
}

TEST(CliFit, LabelsAddScores) {
  TempDir dir;
  const std::string input = dir.write("X.csv", "0,0\n0.1,0\n5,5\n5.1,5\n");
  const std::string labels = dir.write("L.txt", "a\na\nb\nb\n");
  const ProcessResult run =
      kingman_cli({"fit", input, "--labels", labels, "--json", dir.file("r.json")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto report = nlohmann::json::parse(read_text(dir.file("r.json")));
  EXPECT_DOUBLE_EQ(report["scores"]["dendrogram_purity"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(report["scores"]["subtree_score"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(report["scores"]["leave_one_out_accuracy"].get<double>(), 1.0);
}

struct BadInput {
  const char* name;
  const char* content;
  const char* message;  // a fragment the one-line error must contain
};

TEST(CliFit, BadInputExitsThreeWithAClearMessageAndNoOutput) {
  const BadInput cases[] = {
      {"ragged", "1,2,3\n4,5\n6,7,8\n", "row 2"},
      {"empty", "", "no data rows"},
      {"text", "1,2\n3,abc\n5,6\n", "'abc' is not a number"},
      {"infinite", "1,2\n3,inf\n5,6\n", "infinite"},
      {"one_row", "1,2\n", "at least two rows"},
      {"blank", "\n\n", "no data rows"},
      {"huge", "1e200,1\n-1e200,2\n3,4\n", "column 1 spans -1e+200 (row 2) to 1e+200 (row 1)"},
      {"tiny", "1e-200,1\n2e-200,2\n3,4\n", "column 1 has 1e-200 (row 1) and 2e-200 (row 2)"},
  };
  for (const BadInput& c : cases) {
    TempDir dir;
    const std::string input = dir.write(std::string(c.name) + ".csv", c.content);
    const std::string json_path = dir.file("out.json");
    const std::string newick_path = dir.file("out.nwk");
    const ProcessResult run =
        kingman_cli({"fit", input, "--json", json_path, "--newick", newick_path});
    EXPECT_EQ(run.exit_code, 3) << c.name << ": " << run.err;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << c.name << ": " << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_TRUE(run.out.empty());
    EXPECT_FALSE(std::filesystem::exists(json_path)) << c.name;
    EXPECT_FALSE(std::filesystem::exists(newick_path)) << c.name;
    // Nothing else (no temporary files) is left in the folder either.
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path()))
      ++files;
    EXPECT_EQ(files, 1u) << c.name;
  }
}

// Data on a scale where the SMC algorithms' merge-time computations would lose double precision
// (identity covariance) are refused for them with exit 3, and still fitted by the greedy ones;
// the learned covariance (the default) rescales them for every algorithm.
TEST(CliFit, SmcRefusesDataBeyondItsScaleAndSaysWhatToDo) {
  TempDir dir;
  const std::string input = dir.write("X.csv", "1e20,1\n-1e20,2\n3,4\n5,6\n");
  for (const char* algorithm : {"mpost2", "race", "postpost", "priorprior"}) {
    const std::string json_path = dir.file(std::string(algorithm) + ".json");
    const ProcessResult run = kingman_cli({"fit", input, "-a", algorithm, "-p", "4", "--covariance",
                                           "identity", "--json", json_path});
    EXPECT_EQ(run.exit_code, 3) << algorithm << ": " << run.err;
    EXPECT_NE(run.err.find("beyond the 1e+32 up to which the SMC algorithms"), std::string::npos)
        << run.err;
    EXPECT_FALSE(std::filesystem::exists(json_path)) << algorithm;
  }
  EXPECT_EQ(kingman_cli({"fit", input, "--covariance", "identity"}).exit_code, 0);
  const ProcessResult learned = kingman_cli({"fit", input, "-a", "mpost2", "-p", "4"});
  EXPECT_EQ(learned.exit_code, 0) << learned.err;
}

TEST(CliFit, MissingFileAndBadLabelsAreInputErrors) {
  TempDir dir;
  ProcessResult run = kingman_cli({"fit", dir.file("nope.csv")});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("nope.csv"), std::string::npos) << run.err;
  const std::string input = dir.write("X.csv", "1,2\n3,4\n5,7\n");
  const std::string labels = dir.write("L.txt", "a\nb\n");
  run = kingman_cli({"fit", input, "--labels", labels, "--json", dir.file("r.json")});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("2 labels but the data has 3 rows"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.json")));
}

TEST(CliFit, DuplicateRowsWithZeroLeafVarianceAreRefused) {
  TempDir dir;
  const std::string input = dir.write("X.csv", "1,2\n3,4\n1,2\n");
  ProcessResult run = kingman_cli({"fit", input, "--leaf-variance", "0"});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("rows 1 and 3"), std::string::npos) << run.err;
  run = kingman_cli({"fit", input});
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

// With missing entries, rows that agree on every column both observe coincide for the model
// (the other columns contribute nothing): the same rule as for duplicates, for the greedy and
// the SMC algorithms (Greedy-Rate1 once stopped there on a merge height that was not a number).
TEST(CliFit, RowsAgreeingWhereBothAreObservedAreDuplicatesForTheModel) {
  TempDir dir;
  const std::string input = dir.write("X.csv", "1,1,\n3,0,2\n0,2,1\n1,1,5\n");
  for (const char* algorithm : {"greedy-rate1", "postpost", "race"}) {
    ProcessResult run =
        kingman_cli({"fit", input, "-a", algorithm, "-p", "8", "--covariance", "identity",
                     "--leaf-variance", "0", "--json", dir.file("r.json")});
    EXPECT_EQ(run.exit_code, 3) << algorithm << ": " << run.err;
    EXPECT_NE(run.err.find("rows 1 and 4"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("agree on every column both observe"), std::string::npos) << run.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.json")));
    run = kingman_cli({"fit", input, "-a", algorithm, "-p", "8", "--covariance", "identity",
                       "--json", dir.file("r.json")});
    ASSERT_EQ(run.exit_code, 0) << algorithm << ": " << run.err;
    const auto json = nlohmann::json::parse(read_text(dir.file("r.json")));
    EXPECT_GT(json.at("leaf_variance").get<double>(), 0.0) << algorithm;
    EXPECT_TRUE(std::isfinite(json.at("log_joint").get<double>())) << algorithm;
    std::filesystem::remove(dir.file("r.json"));
  }
}

// --resample and --ess-threshold (DESIGN.md's CLI contract) reach the SMC: threshold 0 never
// resamples, 1 after every step but the last; schemes differ; bad values are usage errors.
TEST(CliFit, ResamplingOptionsReachTheSmc) {
  TempDir dir;
  const std::string input = dir.write("X.csv", csv_of(random_points(12, 2, 4), 12, 2));
  auto resampled = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"fit", input, "-a",     "priorpost",
                                     "-p",  "32",  "--json", dir.file("r.json")};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult run = kingman_cli(args);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return nlohmann::json::parse(read_text(dir.file("r.json")));
  };
  EXPECT_TRUE(resampled({"--ess-threshold", "0"}).at("resampled_at").empty());
  EXPECT_EQ(resampled({"--ess-threshold", "1"}).at("resampled_at").size(), 10u);
  const double systematic =
      resampled({"--ess-threshold", "1", "--resample", "systematic"}).at("log_evidence");
  const double multinomial =
      resampled({"--ess-threshold", "1", "--resample", "multinomial"}).at("log_evidence");
  EXPECT_NE(systematic, multinomial);
  ProcessResult bad = kingman_cli({"fit", input, "-a", "priorpost", "--ess-threshold", "1.5"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--ess-threshold"), std::string::npos) << bad.err;
  bad = kingman_cli({"fit", input, "-a", "priorpost", "--resample", "bogus"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("bogus"), std::string::npos) << bad.err;
}

TEST(CliFit, UsageErrorsExitTwo) {
  TempDir dir;
  const std::string input = dir.write("X.csv", "1,2\n3,4\n5,7\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"fit", input, "-a", "nonsense"},
        std::vector<std::string>{"fit", input, "--covariance", "bogus"},
        std::vector<std::string>{"fit", input, "--no-such-flag"}, std::vector<std::string>{"fit"},
        std::vector<std::string>{"fit", input, "--leaf-variance", "-1"},
        std::vector<std::string>{"fit", input, "--header", "maybe"}, std::vector<std::string>{}}) {
    const ProcessResult run = kingman_cli(args);
    EXPECT_EQ(run.exit_code, 2) << (args.empty() ? "" : args.back()) << ": " << run.err;
    EXPECT_FALSE(run.err.empty());
  }
}

// Numeric options out of range are named with a plain message (CLI11's own checks printed the
// largest double with 300 digits).
TEST(CliFit, NumbersOutOfRangeGetAPlainMessage) {
  TempDir dir;
  const std::string input = dir.write("X.csv", "1,2\n3,4\n5,7\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"fit", input, "-a", "mpost2", "-p", "0"},
        std::vector<std::string>{"fit", input, "--threads", "-1"},
        std::vector<std::string>{"fit", input, "--shrinkage", "x"},
        std::vector<std::string>{"generate", "-n", "5", "-d", "0"}}) {
    const ProcessResult run = kingman_cli(args);
    EXPECT_EQ(run.exit_code, 2) << args[args.size() - 2] << ": " << run.err;
    EXPECT_NE(run.err.find(args[args.size() - 2]), std::string::npos) << run.err;
    EXPECT_LT(run.err.size(), 200u) << run.err;
    EXPECT_EQ(run.err.find("179769"), std::string::npos) << run.err;
  }
}

TEST(CliFit, MaxMemoryRoutesRate1AndRefusesWhatCannotFit) {
  TempDir dir;
  const std::string input = dir.write("X.csv", csv_of(random_points(2000, 3, 8), 2000, 3));
  const ProcessResult full = kingman_cli({"fit", input, "--linkage", "-"});
  // The pair cache needs 16 MB, the bounded path about 2 MB.
  const ProcessResult bounded = kingman_cli({"fit", input, "--linkage", "-", "--max-memory", "6M"});
  ASSERT_EQ(bounded.exit_code, 0) << bounded.err;
  EXPECT_EQ(bounded.out, full.out) << "the bounded-memory path gives the same tree";
  const ProcessResult too_small =
      kingman_cli({"fit", input, "--linkage", "-", "--max-memory", "100k"});
  EXPECT_EQ(too_small.exit_code, 1);
  EXPECT_NE(too_small.err.find("--max-memory"), std::string::npos) << too_small.err;
  EXPECT_TRUE(too_small.out.empty()) << "no partial output";
  const std::string json = dir.file("r.json");
  const ProcessResult refused =
      kingman_cli({"fit", input, "-a", "greedy-maxprob", "--max-memory", "100k", "--json", json});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("--max-memory"), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(json));
  const ProcessResult smc = kingman_cli({"fit", input, "-a", "mpost2", "--max-memory", "100k"});
  EXPECT_EQ(smc.exit_code, 1);
  EXPECT_NE(smc.err.find("--max-memory"), std::string::npos) << smc.err;
  EXPECT_EQ(kingman_cli({"fit", input, "--max-memory", "lots"}).exit_code, 2);
}

TEST(CliFit, PairStorageChoosesGreedyRate1sPathAndTheJsonSaysWhich) {
  TempDir dir;
  const std::string input = dir.write("X.csv", csv_of(random_points(600, 3, 9), 600, 3));
  std::string linkages[3];
  const char* storages[3] = {"full", "bounded", "auto"};
  for (int k = 0; k < 3; ++k) {
    const std::string json = dir.file(std::string(storages[k]) + ".json");
    const ProcessResult run = kingman_cli(
        {"fit", input, "--pair-storage", storages[k], "--linkage", "-", "--json", json});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    linkages[k] = run.out;
    // auto: 600 points is far below where the bounded path is chosen.
    EXPECT_EQ(nlohmann::json::parse(read_text(json))["pair_storage"], k == 1 ? "bounded" : "full")
        << storages[k];
  }
  EXPECT_EQ(linkages[1], linkages[0]) << "the same tree from both paths";
  EXPECT_EQ(linkages[2], linkages[0]);
  // The full cache asked for where it does not fit (600 points: 1.4 MB): refused, and the
  // message says what the bounded path would need.
  const ProcessResult too_small =
      kingman_cli({"fit", input, "--pair-storage", "full", "--max-memory", "1M", "--linkage", "-"});
  EXPECT_EQ(too_small.exit_code, 1);
  EXPECT_NE(too_small.err.find("--pair-storage bounded"), std::string::npos) << too_small.err;
  EXPECT_TRUE(too_small.out.empty()) << "no partial output";
  // Usage errors: an unknown storage, a bounded path for an algorithm that has none, and the
  // option with the binary likelihood's SMC (which runs no greedy tree).
  const std::string binary = dir.write("B.csv", "0,1\n1,1\n0,0\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"fit", input, "--pair-storage", "some"},
        std::vector<std::string>{"fit", input, "--pair-storage", "bounded", "-a", "greedy-maxprob"},
        std::vector<std::string>{"fit", binary, "--likelihood", "binary", "-a", "race",
                                 "--pair-storage", "full"}}) {
    const ProcessResult refused = kingman_cli(args);
    EXPECT_EQ(refused.exit_code, 2) << args.back() << ": " << refused.err;
    EXPECT_NE(refused.err.find("pair-storage"), std::string::npos) << refused.err;
  }
  // The binary likelihood's Greedy-Rate1 has both paths too: the same linkage.
  const ProcessResult binary_full = kingman_cli(
      {"fit", binary, "--likelihood", "binary", "--pair-storage", "full", "--linkage", "-"});
  const ProcessResult binary_bounded = kingman_cli(
      {"fit", binary, "--likelihood", "binary", "--pair-storage", "bounded", "--linkage", "-"});
  ASSERT_EQ(binary_full.exit_code, 0) << binary_full.err;
  ASSERT_EQ(binary_bounded.exit_code, 0) << binary_bounded.err;
  EXPECT_EQ(binary_bounded.out, binary_full.out);
}

TEST(CliFit, SameInputGivesIdenticalOutput) {
  TempDir dir;
  const std::string input = dir.write("X.csv", csv_of(random_points(50, 4, 3), 50, 4));
  const ProcessResult a = kingman_cli({"fit", input, "--linkage", "-"});
  const ProcessResult b = kingman_cli({"fit", input, "--linkage", "-"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(std::count(a.out.begin(), a.out.end(), '\n'), 49);
}

// More threads than the machine has cores: honoured silently (oneTBB would cap them and warn
// on stderr), with the same particles as one thread, pinned to CPUs (--pin-threads) or not.
TEST(CliFit, MoreThreadsThanCoresRunQuietlyAndGiveTheSameParticles) {
  TempDir dir;
  const std::string input = dir.write("X.csv", csv_of(random_points(30, 3, 4), 30, 3));
  std::string reports[3];
  for (int k = 0; k < 3; ++k) {
    // The third run pins its 64 threads to the machine's CPUs, several to a CPU.
    const std::string threads = k == 0 ? "1" : "64";
    const std::string json = dir.file(k == 0 ? "one.json" : k == 1 ? "many.json" : "pinned.json");
    std::vector<std::string> args = {"fit",    input, "-a",        "mpost2", "-p",     "40",
                                     "--seed", "3",   "--threads", threads,  "--json", json};
    if (k == 2) args.push_back("--pin-threads");
    const ProcessResult run = kingman_cli(args);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.err, "") << threads << " threads";
    auto report = nlohmann::json::parse(read_text(json));
    EXPECT_EQ(report["threads"], std::stoi(threads));
    EXPECT_EQ(report["pin_threads"], k == 2);
    report.erase("threads");
    report.erase("pin_threads");
    report.erase("seconds");
    reports[k] = report.dump();
  }
  EXPECT_EQ(reports[0], reports[1]);
  EXPECT_EQ(reports[0], reports[2]);
}

// KINGMAN_SIMD picks the copy of the SIMD kernels (kernels/simd_level.hpp): every copy this CPU
// runs gives the same trees and evidence, the JSON names the copy, and a name that is not a copy
// is a usage error that names it and writes nothing.
TEST(CliFit, EveryCopyOfTheSimdKernelsGivesTheSameOutput) {
  TempDir dir;
  // Missing entries take the per-dimension search's kernels; MPost2 the row sums and distances.
  const std::vector<double> x = random_points(40, 9, 12);
  std::ostringstream text;
  text.precision(17);
  for (std::size_t i = 0; i < 40; ++i)
    for (std::size_t j = 0; j < 9; ++j) {
      if ((i * 9 + j) % 11 != 5) text << x[i * 9 + j];  // every eleventh entry missing
      text << (j + 1 < 9 ? "," : "\n");
    }
  const std::string input = dir.write("X.csv", text.str());
  std::string expected[2];
  for (const kernels::SimdLevel level :
       {kernels::SimdLevel::baseline, kernels::SimdLevel::avx2, kernels::SimdLevel::avx512}) {
    if (static_cast<int>(level) > static_cast<int>(kernels::widest_simd_level())) continue;
    const std::string name(kernels::to_string(level));
    ASSERT_EQ(setenv("KINGMAN_SIMD", name.c_str(), 1), 0);
    const std::string json = dir.file(name + ".json");
    const ProcessResult greedy = kingman_cli({"fit", input, "--linkage", "-", "--threads", "1"});
    const ProcessResult smc =
        kingman_cli({"fit", input, "-a", "mpost2", "-p", "16", "--linkage", "-", "--json", json});
    ASSERT_EQ(greedy.exit_code, 0) << name << ": " << greedy.err;
    ASSERT_EQ(smc.exit_code, 0) << name << ": " << smc.err;
    auto report = nlohmann::json::parse(read_text(json));
    EXPECT_EQ(report["simd"], name);
    if (level == kernels::SimdLevel::baseline) {
      expected[0] = greedy.out;
      expected[1] = smc.out + report["log_evidence"].dump();
    } else {
      EXPECT_EQ(greedy.out, expected[0]) << name << " against the baseline copy";
      EXPECT_EQ(smc.out + report["log_evidence"].dump(), expected[1])
          << name << " against the baseline copy";
    }
  }
  ASSERT_EQ(setenv("KINGMAN_SIMD", "sse5", 1), 0);
  const std::string json = dir.file("refused.json");
  const ProcessResult refused = kingman_cli({"fit", input, "--json", json});
  ASSERT_EQ(unsetenv("KINGMAN_SIMD"), 0);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("KINGMAN_SIMD"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("sse5"), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(json));
}

TEST(CliGenerate, WritesDataTreeAndLabelsThatFitReads) {
  TempDir dir;
  const ProcessResult gen =
      kingman_cli({"generate", "-n", "40", "-d", "3", "--seed", "5", "--clusters", "4", "--data",
                   dir.file("g.csv"), "--newick", dir.file("g.nwk"), "--linkage",
                   dir.file("g_link.csv"), "--labels", dir.file("g.lab")});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const MergeTree truth = read_linkage_csv(dir.file("g_link.csv"));
  EXPECT_EQ(truth.leaf_count, 40u);
  const ProcessResult fit = kingman_cli(
      {"fit", dir.file("g.csv"), "--labels", dir.file("g.lab"), "--json", dir.file("r.json")});
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  const auto report = nlohmann::json::parse(read_text(dir.file("r.json")));
  // Data drawn from the model with well-separated clusters: the fit should find them mostly.
  EXPECT_GT(report["scores"]["dendrogram_purity"].get<double>(), 0.5);
  // Same seed, same data.
  const ProcessResult again = kingman_cli({"generate", "-n", "40", "-d", "3", "--seed", "5"});
  EXPECT_EQ(again.out, read_text(dir.file("g.csv")));
}

TEST(CliScore, ScoresALinkageFile) {
  TempDir dir;
  const std::string linkage = dir.write("z.csv", "0,1,0.1,2\n2,3,0.2,2\n4,5,1,4\n");
  const std::string labels = dir.write("l.txt", "a\nb\na\nb\n");
  const ProcessResult run = kingman_cli({"score", "--linkage", linkage, "--labels", labels});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto scores = nlohmann::json::parse(run.out);
  EXPECT_DOUBLE_EQ(scores["dendrogram_purity"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(scores["subtree_score"].get<double>(), 0.0);
}

}  // namespace
}  // namespace kingman
