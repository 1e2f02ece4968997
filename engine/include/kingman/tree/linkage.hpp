#pragma once
// scipy linkage format: n-1 rows "a,b,height,size" with node ids as in MergeTree.
#include <string>

#include "kingman/tree/merge_tree.hpp"

namespace kingman {

std::string to_linkage_csv(const MergeTree& tree);

}  // namespace kingman
