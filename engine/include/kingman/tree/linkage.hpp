#pragma once
// scipy linkage format: n-1 rows "a,b,height,size" with node ids as in MergeTree.
#include <string>

#include "kingman/tree/merge_tree.hpp"

namespace kingman {

// One row per merge, in merge order: "a,b,height,size\n" with a < b written as integers, the
// height with round-trip precision, and size the merged cluster's leaf count. Throws Error if
// the tree is invalid or incomplete.
std::string to_linkage_csv(const MergeTree& tree);

// Reads a linkage matrix as to_linkage_csv or numpy.savetxt write it: 4 columns separated by
// commas (or, on lines without commas, by whitespace); ids and sizes may be written as floats
// with integral values ("3.000000000000000000e+00"). An optional header row (no numeric field)
// and blank lines are skipped. The leaf count is rows + 1. Throws InputError naming the source
// and line when a row is malformed, an id is out of range or reused, heights decrease, or a
// size disagrees with the children's sizes.
MergeTree parse_linkage_csv(const std::string& text, const std::string& source_name = "linkage");
// The same from a file; throws InputError if it cannot be read.
MergeTree read_linkage_csv(const std::string& path);

}  // namespace kingman
