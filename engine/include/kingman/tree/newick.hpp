#pragma once
// Newick with branch lengths (parent height minus child height).
#include <string>
#include <vector>

#include "kingman/tree/merge_tree.hpp"

namespace kingman {

// leaf_names may be empty (leaves are then named by their 0-based row index).
std::string to_newick(const MergeTree& tree, const std::vector<std::string>& leaf_names = {});

struct ParsedNewick {
  MergeTree tree;                      // merges ordered by height, leaf ids by name order below
  std::vector<std::string> leaf_names; // leaf i's name
};
// Parses what to_newick writes (ultrametric, binary). Leaves are numbered in order of
// appearance unless names_in_order is given, in which case leaf ids follow it.
ParsedNewick parse_newick(const std::string& text, const std::vector<std::string>& names_in_order = {});

}  // namespace kingman
