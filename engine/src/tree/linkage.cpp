#include "kingman/tree/linkage.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kingman/error.hpp"

namespace kingman {

namespace {

// Shortest decimal text that reads back as the same double (std::to_chars guarantees it).
void append_round_trip(std::string& out, double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

std::string_view trim(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  if (line.find(',') != std::string_view::npos) {
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = line.find(',', start);
      fields.push_back(trim(line.substr(start, comma - start)));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return fields;
  }
  std::size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
    const std::size_t start = pos;
    while (pos < line.size() && line[pos] != ' ' && line[pos] != '\t') ++pos;
    if (pos > start) fields.push_back(line.substr(start, pos - start));
  }
  return fields;
}

std::optional<double> parse_number(std::string_view field) {
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);  // from_chars rejects '+'
  double value = 0.0;
  const auto result = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || result.ec != std::errc() || result.ptr != field.data() + field.size()) {
    return std::nullopt;
  }
  return value;
}

struct LinkageRow {
  std::size_t line = 0;  // 1-based line number in the source
  std::size_t a = 0;
  std::size_t b = 0;
  double height = 0.0;
  std::size_t size = 0;
};

}  // namespace

std::string to_linkage_csv(const MergeTree& tree) {
  validate(tree);
  if (!tree.complete()) {
    throw Error(fmt::format("linkage: the tree is incomplete ({} merges for {} leaves)",
                            tree.merges.size(), tree.leaf_count));
  }
  const std::vector<std::size_t> sizes = cluster_sizes(tree);
  std::string out;
  out.reserve(tree.merges.size() * 40);
  for (std::size_t i = 0; i < tree.merges.size(); ++i) {
    const Merge& merge = tree.merges[i];
    out.append(std::to_string(std::min(merge.left, merge.right)));
    out.push_back(',');
    out.append(std::to_string(std::max(merge.left, merge.right)));
    out.push_back(',');
    append_round_trip(out, merge.height);
    out.push_back(',');
    out.append(std::to_string(sizes[tree.leaf_count + i]));
    out.push_back('\n');
  }
  return out;
}

MergeTree parse_linkage_csv(const std::string& text, const std::string& source_name) {
  auto fail = [&](std::size_t line, const std::string& what) -> InputError {
    return InputError(fmt::format("{}: line {}: {}", source_name, line, what));
  };
  // Ids and sizes must be integers, written plainly or as integral floats.
  auto parse_count = [&](std::string_view field, std::size_t line, const char* column) {
    const std::optional<double> value = parse_number(field);
    constexpr double kLargestExactInteger = 9007199254740992.0;  // 2^53
    if (!value || !(*value >= 0.0) || *value > kLargestExactInteger ||
        std::floor(*value) != *value) {
      throw fail(line, fmt::format("{} '{}' is not a nonnegative integer", column, field));
    }
    return static_cast<std::size_t>(*value);
  };

  std::vector<LinkageRow> rows;
  bool seen_first_line = false;
  std::size_t line_number = 0;
  std::string_view remaining = text;
  while (!remaining.empty()) {
    const std::size_t newline = remaining.find('\n');
    const std::string_view line = trim(remaining.substr(0, newline));
    remaining =
        newline == std::string_view::npos ? std::string_view{} : remaining.substr(newline + 1);
    ++line_number;
    if (line.empty() || line.front() == '#') continue;  // numpy writes headers as comments
    const std::vector<std::string_view> fields = split_fields(line);
    const bool first_line = !seen_first_line;
    seen_first_line = true;
    if (first_line && std::none_of(fields.begin(), fields.end(), [](std::string_view field) {
          return parse_number(field).has_value();
        })) {
      continue;  // a header row such as "a,b,height,size"
    }
    if (fields.size() != 4) {
      throw fail(line_number,
                 fmt::format("expected 4 columns (a, b, height, size), found {}", fields.size()));
    }
    LinkageRow row;
    row.line = line_number;
    row.a = parse_count(fields[0], line_number, "id a");
    row.b = parse_count(fields[1], line_number, "id b");
    const std::optional<double> height = parse_number(fields[2]);
    if (!height) throw fail(line_number, fmt::format("height '{}' is not a number", fields[2]));
    if (!std::isfinite(*height) || *height < 0.0) {
      throw fail(line_number, fmt::format("height {} is not a finite number >= 0", fields[2]));
    }
    row.height = *height;
    row.size = parse_count(fields[3], line_number, "size");
    rows.push_back(row);
  }
  if (rows.empty()) throw InputError(fmt::format("{}: no linkage rows", source_name));

  MergeTree tree;
  tree.leaf_count = rows.size() + 1;
  const std::size_t n = tree.leaf_count;
  std::vector<std::size_t> sizes(n + rows.size(), 1);
  std::vector<bool> used(n + rows.size(), false);
  double previous_height = 0.0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const LinkageRow& row = rows[i];
    for (const std::size_t child : {row.a, row.b}) {
      if (child >= n + i) {
        throw fail(row.line, fmt::format("id {} does not exist yet (row {} of a linkage with {} "
                                         "leaves may use ids below {})",
                                         child, i + 1, n, n + i));
      }
      if (used[child]) {
        throw fail(row.line, fmt::format("node {} was already merged on an earlier row", child));
      }
      used[child] = true;
    }
    if (row.height < previous_height) {
      throw fail(row.line, fmt::format("height {} is below the previous row's height {} "
                                       "(heights must be nondecreasing)",
                                       row.height, previous_height));
    }
    previous_height = row.height;
    sizes[n + i] = sizes[row.a] + sizes[row.b];
    if (row.size != sizes[n + i]) {
      throw fail(row.line, fmt::format("size {} disagrees with the children's sizes {} + {}",
                                       row.size, sizes[row.a], sizes[row.b]));
    }
    tree.merges.push_back(Merge{row.a, row.b, row.height});
  }
  return tree;
}

MergeTree read_linkage_csv(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(fmt::format("{}: cannot open the linkage file", path));
  std::ostringstream content;
  content << file.rdbuf();
  if (file.bad()) throw InputError(fmt::format("{}: error while reading", path));
  return parse_linkage_csv(content.str(), path);
}

}  // namespace kingman
