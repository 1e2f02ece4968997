#include "kingman/tree/newick.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kingman/error.hpp"

namespace kingman {
namespace {

// A random complete tree: merges of random live pairs at increasing random heights. With
// dyadic steps every height is a small multiple of 1/64, so all subtractions are exact.
MergeTree random_tree(std::size_t n, std::mt19937_64& rng, bool dyadic_heights) {
  MergeTree tree;
  tree.leaf_count = n;
  std::vector<std::size_t> live(n);
  for (std::size_t i = 0; i < n; ++i) live[i] = i;
  std::exponential_distribution<double> step(1.0);
  std::uniform_int_distribution<int> dyadic_step(1, 64);
  double height = 0.0;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    height += dyadic_heights ? dyadic_step(rng) / 64.0 : step(rng);
    std::uniform_int_distribution<std::size_t> pick(0, live.size() - 1);
    const std::size_t a = pick(rng);
    std::swap(live[a], live.back());
    const std::size_t left = live.back();
    live.pop_back();
    const std::size_t b = std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(rng);
    const std::size_t right = live[b];
    live[b] = n + i;
    tree.merges.push_back(Merge{left, right, height});
  }
  return tree;
}

std::vector<std::string> index_names(std::size_t n) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < n; ++i) names.push_back(std::to_string(i));
  return names;
}

TEST(Newick, WritesBranchLengthsAndQuotesNames) {
  const MergeTree tree{3, {{0, 1, 1.0}, {3, 2, 3.5}}};
  EXPECT_EQ(to_newick(tree), "((0:1,1:1):2.5,2:3.5);");
  EXPECT_EQ(to_newick(tree, {"a b", "it's", "plain_name"}),
            "(('a b':1,'it''s':1):2.5,plain_name:3.5);");
  EXPECT_EQ(to_newick(tree, {"x,y", "(p)", ""}), "(('x,y':1,'(p)':1):2.5,'':3.5);");
  EXPECT_EQ(to_newick(MergeTree{1, {}}, {"only"}), "only;");
}

TEST(Newick, WritesRoundTripDigits) {
  const double h = 0.1 + 0.2;  // 0.30000000000000004: needs 17 significant digits
  const MergeTree tree{2, {{0, 1, h}}};
  EXPECT_EQ(to_newick(tree), "(0:0.30000000000000004,1:0.30000000000000004);");
}

TEST(Newick, RejectsBadInputToWriter) {
  EXPECT_THROW(to_newick(MergeTree{3, {{0, 1, 1.0}}}), Error);         // incomplete
  EXPECT_THROW(to_newick(MergeTree{2, {{0, 1, 1.0}}}, {"a"}), Error);  // name count
  EXPECT_THROW(to_newick(MergeTree{2, {{0, 1, -1.0}}}), Error);        // invalid
}

TEST(Newick, SpecialNamesRoundTrip) {
  const std::vector<std::string> names = {
      "a b", "it's", "x,y", "(p)", "[c]", "semi;colon", "", "tab\there", "under_score", "colon:"};
  std::mt19937_64 rng(7);
  // Dyadic heights: the text written back below must match byte for byte.
  const MergeTree tree = random_tree(names.size(), rng, true);
  const std::string text = to_newick(tree, names);
  const ParsedNewick by_order = parse_newick(text, names);
  EXPECT_EQ(by_order.leaf_names, names);
  ASSERT_EQ(by_order.tree.merges.size(), tree.merges.size());
  for (std::size_t i = 0; i < tree.merges.size(); ++i) {
    EXPECT_EQ(by_order.tree.merges[i].left, tree.merges[i].left);
    EXPECT_EQ(by_order.tree.merges[i].right, tree.merges[i].right);
  }
  // Without names_in_order the leaves are numbered as they appear, with the same names.
  const ParsedNewick by_appearance = parse_newick(text);
  ASSERT_EQ(by_appearance.leaf_names.size(), names.size());
  for (const std::string& name : by_appearance.leaf_names) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  EXPECT_EQ(to_newick(by_appearance.tree, by_appearance.leaf_names), text);
}

TEST(Newick, RandomTreesRoundTrip) {
  std::mt19937_64 rng(12345);
  for (const std::size_t n : {2, 3, 5, 17, 100, 1000}) {
    for (const bool dyadic : {false, true}) {
      const MergeTree tree = random_tree(n, rng, dyadic);
      const std::string text = to_newick(tree);
      const ParsedNewick parsed = parse_newick(text, index_names(n));
      ASSERT_EQ(parsed.tree.leaf_count, n);
      ASSERT_EQ(parsed.tree.merges.size(), n - 1);
      for (std::size_t i = 0; i + 1 < n; ++i) {
        const Merge& expected = tree.merges[i];
        const Merge& actual = parsed.tree.merges[i];
        ASSERT_EQ(actual.left, expected.left) << "n=" << n << " merge " << i;
        ASSERT_EQ(actual.right, expected.right) << "n=" << n << " merge " << i;
        if (dyadic) {
          ASSERT_EQ(actual.height, expected.height) << "n=" << n << " merge " << i;
        } else {
          ASSERT_NEAR(actual.height, expected.height, 1e-13 * expected.height);
        }
      }
      // Writing the parsed tree again gives text that parses to the same topology.
      EXPECT_EQ(parse_newick(to_newick(parsed.tree), index_names(n)).tree.merges.size(), n - 1);
    }
  }
}

TEST(Newick, HundredThousandLeafCaterpillarRoundTrips) {
  const std::size_t n = 100000;
  MergeTree tree;
  tree.leaf_count = n;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> step(0.0, 1.0);
  double height = 0.0;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    height += step(rng);
    // Alternate sides so the deep spine is sometimes written first, sometimes last.
    const std::size_t spine = i == 0 ? 0 : n + i - 1;
    const std::size_t leaf = i + 1;
    tree.merges.push_back(i % 2 == 0 ? Merge{spine, leaf, height} : Merge{leaf, spine, height});
  }
  const std::string text = to_newick(tree);
  EXPECT_EQ(text.back(), ';');
  const ParsedNewick parsed = parse_newick(text, index_names(n));
  ASSERT_EQ(parsed.tree.merges.size(), n - 1);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    // Every node has a leaf child, which gives its height exactly.
    ASSERT_EQ(parsed.tree.merges[i].left, tree.merges[i].left) << i;
    ASSERT_EQ(parsed.tree.merges[i].right, tree.merges[i].right) << i;
    ASSERT_EQ(parsed.tree.merges[i].height, tree.merges[i].height) << i;
  }
}

TEST(Newick, ParsesLeavesInOrderOfAppearanceOrByGivenNames) {
  const std::string text = "((b:1,a:1):1,c:2);";
  const ParsedNewick by_appearance = parse_newick(text);
  EXPECT_EQ(by_appearance.leaf_names, (std::vector<std::string>{"b", "a", "c"}));
  ASSERT_EQ(by_appearance.tree.merges.size(), 2u);
  EXPECT_EQ(by_appearance.tree.merges[0].left, 0u);
  EXPECT_EQ(by_appearance.tree.merges[0].right, 1u);
  EXPECT_EQ(by_appearance.tree.merges[1].left, 3u);
  EXPECT_EQ(by_appearance.tree.merges[1].right, 2u);
  EXPECT_EQ(by_appearance.tree.merges[1].height, 2.0);

  const ParsedNewick by_name = parse_newick(text, {"a", "b", "c"});
  EXPECT_EQ(by_name.leaf_names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(by_name.tree.merges[0].left, 1u);
  EXPECT_EQ(by_name.tree.merges[0].right, 0u);
}

TEST(Newick, OrdersMergesByHeightLikeScipy) {
  // The cherry (c,d) is lower than (a,b) although it completes later.
  const ParsedNewick parsed = parse_newick("((a:3,b:3):1,(c:1,d:1):3);");
  ASSERT_EQ(parsed.tree.merges.size(), 3u);
  EXPECT_EQ(parsed.tree.merges[0].left, 2u);  // (c,d) becomes node 4
  EXPECT_EQ(parsed.tree.merges[0].height, 1.0);
  EXPECT_EQ(parsed.tree.merges[1].left, 0u);  // (a,b) becomes node 5
  EXPECT_EQ(parsed.tree.merges[1].height, 3.0);
  EXPECT_EQ(parsed.tree.merges[2].left, 5u);
  EXPECT_EQ(parsed.tree.merges[2].right, 4u);
  EXPECT_EQ(parsed.tree.merges[2].height, 4.0);

  // Equal heights keep the order in which the nodes were completed.
  const ParsedNewick tied = parse_newick("((a:1,b:1):0,(c:1,d:1):0);");
  EXPECT_EQ(tied.tree.merges[0].left, 0u);
  EXPECT_EQ(tied.tree.merges[1].left, 2u);
  EXPECT_EQ(tied.tree.merges[2].left, 4u);
  EXPECT_EQ(tied.tree.merges[2].right, 5u);
}

TEST(Newick, AcceptsWhitespaceCommentsLabelsAndRootLength) {
  const ParsedNewick parsed =
      parse_newick(" ( [a comment] 'x y' : 0.5 ,\n z:5e-1 ) inner_label : 7 ;\n");
  EXPECT_EQ(parsed.leaf_names, (std::vector<std::string>{"x y", "z"}));
  ASSERT_EQ(parsed.tree.merges.size(), 1u);
  EXPECT_EQ(parsed.tree.merges[0].height, 0.5);
  const ParsedNewick single = parse_newick("solo;");
  EXPECT_EQ(single.tree.leaf_count, 1u);
  EXPECT_TRUE(single.tree.merges.empty());
}

TEST(Newick, ToleratesTinyRoundingButNotNonUltrametricTrees) {
  const ParsedNewick parsed = parse_newick("((a:1,b:1):1,c:2.0000000000001);");
  EXPECT_NEAR(parsed.tree.merges[1].height, 2.0, 1e-12);
  EXPECT_THROW(parse_newick("((a:1,b:1):1,c:3);"), InputError);
}

void expect_parse_error(const std::string& text, const std::string& fragment,
                        const std::vector<std::string>& names = {}) {
  try {
    parse_newick(text, names);
    FAIL() << "parsed bad Newick: " << text;
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos)
        << "for " << text << ": " << error.what();
  }
}

TEST(Newick, RejectsMalformedText) {
  expect_parse_error("(a:1,b:1)", "';'");
  expect_parse_error("(a:1,b:1);x", "after ';'");
  expect_parse_error("(a:1,b:1,c:1);", "3 children");
  expect_parse_error("((a:1):1,b:2);", "1 children");
  expect_parse_error("(a,b);", "no branch length");
  expect_parse_error("(a:1,b:-1);", ">= 0");
  expect_parse_error("(a:1,b:x);", "not a number");
  expect_parse_error("(a:1,:1);", "leaf name");
  expect_parse_error("((a:1,b:1):1,c:2", "unbalanced");
  expect_parse_error("(a:1,b:1;", "expected ',' or ')'");
  expect_parse_error("('a:1,b:1);", "unterminated");
  expect_parse_error("(a:1,b:1)[oops;", "comment");
  expect_parse_error("", "end of text");
}

TEST(Newick, RejectsUnknownDuplicateOrMissingNames) {
  expect_parse_error("(a:1,b:1);", "unknown leaf name 'b'", {"a", "c"});
  expect_parse_error("(a:1,a:1);", "more than once", {"a", "b"});
  expect_parse_error("(a:1,b:1);", "'c' is missing", {"a", "b", "c"});
  expect_parse_error("(a:1,b:1);", "listed twice", {"a", "a"});
}

}  // namespace
}  // namespace kingman
