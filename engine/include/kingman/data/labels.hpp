#pragma once
// Class labels, one per data row, used only for scoring trees.
#include <cstddef>
#include <string>
#include <vector>

namespace kingman {

struct Labels {
  std::vector<std::size_t> class_of;  // class index of each row, 0..names.size()-1
  std::vector<std::string> names;     // class names in order of first appearance
};

// One label per line (blank trailing lines ignored). Throws InputError if the count differs
// from expected_rows or a line is empty.
Labels read_labels(const std::string& path, std::size_t expected_rows);
Labels labels_from_strings(const std::vector<std::string>& values);

}  // namespace kingman
