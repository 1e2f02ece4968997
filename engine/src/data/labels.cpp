#include "kingman/data/labels.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "kingman/error.hpp"

namespace kingman {
namespace {

std::string_view trim(std::string_view text) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace

Labels read_labels(const std::string& path, std::size_t expected_rows) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::ostringstream buffer;
  buffer << file.rdbuf();
  if (file.bad()) throw InputError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  const std::string text = std::move(buffer).str();

  std::string_view rest = text;
  if (rest.substr(0, 3) == "\xEF\xBB\xBF") rest.remove_prefix(3);  // UTF-8 byte order mark
  std::vector<std::string> values;
  std::size_t first_blank_line = 0;  // a blank line not yet known to be trailing, 0 if none
  for (std::size_t line = 1; !rest.empty(); ++line) {
    const std::size_t stop = rest.find('\n');
    const std::string_view label = trim(rest.substr(0, stop));
    rest.remove_prefix(stop == std::string_view::npos ? rest.size() : stop + 1);
    if (label.empty()) {
      if (first_blank_line == 0) first_blank_line = line;
      continue;
    }
    // A blank line followed by a label would shift every later label onto the wrong row.
    if (first_blank_line != 0) {
      throw InputError(
          fmt::format("{}, line {}: empty label (only trailing blank lines are allowed)", path,
                      first_blank_line));
    }
    values.emplace_back(label);
  }
  if (values.size() != expected_rows) {
    throw InputError(fmt::format("{} has {} label{} but the data has {} row{}", path, values.size(),
                                 values.size() == 1 ? "" : "s", expected_rows,
                                 expected_rows == 1 ? "" : "s"));
  }
  return labels_from_strings(values);
}

Labels labels_from_strings(const std::vector<std::string>& values) {
  Labels labels;
  labels.class_of.reserve(values.size());
  std::unordered_map<std::string, std::size_t> index_of_name;
  for (const std::string& value : values) {
    auto [position, inserted] = index_of_name.try_emplace(value, labels.names.size());
    if (inserted) labels.names.push_back(value);
    labels.class_of.push_back(position->second);
  }
  return labels;
}

}  // namespace kingman
