#pragma once
// Newick with branch lengths (parent height minus child height).
#include <string>
#include <vector>

#include "kingman/tree/merge_tree.hpp"

namespace kingman {

// The complete tree as one line ending in ';', without a root branch length. Branch lengths
// are written with the shortest digits that read back as the same double. Names holding
// whitespace, control characters or any of ()[]':;, (or empty names) are single-quoted with
// inner quotes doubled; underscores are left as they are. leaf_names may be empty (leaves are
// then named by their 0-based row index). Iterative: safe for caterpillars of any depth.
// Throws Error if the tree is invalid or incomplete or the name count differs from n.
std::string to_newick(const MergeTree& tree, const std::vector<std::string>& leaf_names = {});

struct ParsedNewick {
  MergeTree tree;                       // merges ordered by height, leaf ids by name order below
  std::vector<std::string> leaf_names;  // leaf i's name
};
// Parses what to_newick writes (ultrametric, binary); also accepts whitespace, [comments],
// internal node labels (ignored) and a root branch length (ignored). Leaves are numbered in
// order of appearance unless names_in_order is given, in which case leaf ids follow it.
// Heights are rebuilt upwards from leaves at height 0; the two children of a node must agree
// on its height to a relative 1e-6 (rounding of printed lengths), else the tree is rejected
// as not ultrametric. Merges are sorted by height, ties in the order nodes are closed, as
// scipy numbers them. Throws InputError, naming the character position, for malformed text,
// a polytomy or unary node, a missing or negative branch length, or (with names_in_order)
// an unknown, repeated or missing leaf name.
ParsedNewick parse_newick(const std::string& text,
                          const std::vector<std::string>& names_in_order = {});

}  // namespace kingman
