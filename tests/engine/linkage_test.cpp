#include "kingman/tree/linkage.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "kingman/error.hpp"

namespace kingman {
namespace {

MergeTree random_tree(std::size_t n, std::mt19937_64& rng) {
  MergeTree tree;
  tree.leaf_count = n;
  std::vector<std::size_t> live(n);
  for (std::size_t i = 0; i < n; ++i) live[i] = i;
  std::exponential_distribution<double> step(1.0);
  double height = 0.0;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    height += step(rng);
    std::shuffle(live.begin(), live.end(), rng);
    const std::size_t left = live.back();
    live.pop_back();
    const std::size_t right = live.back();
    live.back() = n + i;
    tree.merges.push_back(Merge{left, right, height});
  }
  return tree;
}

TEST(Linkage, WritesScipyRows) {
  // Merge 1 lists the larger id first; the CSV writes a < b.
  const MergeTree tree{4, {{1, 0, 0.25}, {3, 2, 0.1 + 0.2}, {5, 4, 2.0}}};
  EXPECT_EQ(to_linkage_csv(tree),
            "0,1,0.25,2\n"
            "2,3,0.30000000000000004,2\n"
            "4,5,2,4\n");
  EXPECT_THROW(to_linkage_csv(MergeTree{4, {{0, 1, 0.5}}}), Error);  // incomplete
}

TEST(Linkage, RandomTreesRoundTripExactly) {
  std::mt19937_64 rng(99);
  for (const std::size_t n : {2, 3, 10, 200}) {
    const MergeTree tree = random_tree(n, rng);
    const MergeTree read = parse_linkage_csv(to_linkage_csv(tree));
    ASSERT_EQ(read.leaf_count, n);
    ASSERT_EQ(read.merges.size(), n - 1);
    for (std::size_t i = 0; i + 1 < n; ++i) {
      EXPECT_EQ(read.merges[i].left, std::min(tree.merges[i].left, tree.merges[i].right));
      EXPECT_EQ(read.merges[i].right, std::max(tree.merges[i].left, tree.merges[i].right));
      EXPECT_EQ(read.merges[i].height, tree.merges[i].height);  // bit-exact
    }
  }
}

TEST(Linkage, ReadsNumpySavetxtOutput) {
  // numpy.savetxt(path, Z): '%.18e' fields separated by spaces, optional '#' header.
  const std::string spaced =
      "# linkage\n"
      "0.000000000000000000e+00 1.000000000000000000e+00 5.000000000000000000e-01 "
      "2.000000000000000000e+00\n"
      "2.000000000000000000e+00 3.000000000000000000e+00 1.250000000000000000e+00 "
      "3.000000000000000000e+00\n";
  const MergeTree tree = parse_linkage_csv(spaced);
  ASSERT_EQ(tree.leaf_count, 3u);
  EXPECT_EQ(tree.merges[0].left, 0u);
  EXPECT_EQ(tree.merges[1].left, 2u);
  EXPECT_EQ(tree.merges[1].right, 3u);
  EXPECT_EQ(tree.merges[1].height, 1.25);

  const std::string commas =
      "a,b,height,size\r\n"
      "1.0e+00, 0.0e+00, 5e-1, 2\r\n"
      "\r\n"
      "3,2,1.25,+3.0\r\n";
  const MergeTree from_commas = parse_linkage_csv(commas);
  ASSERT_EQ(from_commas.leaf_count, 3u);
  EXPECT_EQ(from_commas.merges[0].left, 1u);
  EXPECT_EQ(from_commas.merges[0].right, 0u);
  EXPECT_EQ(from_commas.merges[1].height, 1.25);
}

void expect_read_error(const std::string& text, const std::string& fragment) {
  try {
    parse_linkage_csv(text, "z.csv");
    FAIL() << "accepted bad linkage:\n" << text;
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos)
        << "for:\n"
        << text << "got: " << error.what();
  }
}

TEST(Linkage, RejectsBadRowsWithLineNumbers) {
  expect_read_error("", "no linkage rows");
  expect_read_error("0,1,0.5\n", "z.csv: line 1: expected 4 columns");
  expect_read_error("0,1,0.5,2\n2,3,1,3,9\n", "line 2: expected 4 columns");
  expect_read_error("0,1.5,0.5,2\n", "line 1: id b '1.5' is not a nonnegative integer");
  expect_read_error("-1,1,0.5,2\n", "id a '-1'");
  expect_read_error("0,1,0.5,2\n2,x,1,3\n", "line 2: id b 'x'");
  expect_read_error("0,1,nan,2\n", "line 1: height nan is not a finite number");
  expect_read_error("0,1,-0.5,2\n", "not a finite number >= 0");
  expect_read_error("0,1,oops,2\n", "height 'oops' is not a number");
  expect_read_error("0,1,0.5,2\n3,4,1,3\n", "line 2: id 4 does not exist yet");
  expect_read_error("0,1,0.5,2\n1,2,1,2\n", "line 2: node 1 was already merged");
  expect_read_error("0,1,0.5,2\n2,3,0.25,3\n", "line 2: height 0.25 is below");
  expect_read_error("0,1,0.5,3\n", "line 1: size 3 disagrees");
  expect_read_error("\n\n0,1,0.5,2\n2,3,1,2\n", "line 4: size 2 disagrees");
}

TEST(Linkage, ReadsFilesAndReportsMissingOnes) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("kingman_linkage_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
       ".csv");
  {
    std::ofstream file(path);
    file << "0,1,0.5,2\n2,3,1.5,3\n";
  }
  const MergeTree tree = read_linkage_csv(path.string());
  std::filesystem::remove(path);
  EXPECT_EQ(tree.leaf_count, 3u);
  EXPECT_EQ(tree.merges[1].height, 1.5);
  try {
    read_linkage_csv(path.string());
    FAIL() << "read a missing file";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find(path.string()), std::string::npos);
  }
}

}  // namespace
}  // namespace kingman
