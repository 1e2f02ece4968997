#include "kingman/tree/newick.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kingman/error.hpp"

namespace kingman {

namespace {

// Characters that end an unquoted Newick label, or that force a label to be quoted on output.
constexpr std::string_view kNewickDelimiters = "()[]':;,";

bool is_newick_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool ends_unquoted_token(char c) {
  return is_newick_space(c) || kNewickDelimiters.find(c) != std::string_view::npos;
}

// Shortest decimal text that reads back as the same double (std::to_chars guarantees it).
void append_round_trip(std::string& out, double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

// Newick quoting: a label with a delimiter, whitespace, a quote, or no characters at all is
// written in single quotes with inner quotes doubled. Underscores are left bare; our parser
// keeps them as underscores (the strict "underscore means blank" rule is not applied).
void append_label(std::string& out, std::string_view name) {
  const bool needs_quotes = name.empty() || std::any_of(name.begin(), name.end(), [](char c) {
                              return ends_unquoted_token(c) || static_cast<unsigned char>(c) < 0x20;
                            });
  if (!needs_quotes) {
    out.append(name);
    return;
  }
  out.push_back('\'');
  for (const char c : name) {
    if (c == '\'') out.push_back('\'');
    out.push_back(c);
  }
  out.push_back('\'');
}

}  // namespace

std::string to_newick(const MergeTree& tree, const std::vector<std::string>& leaf_names) {
  validate(tree);
  if (!tree.complete()) {
    throw Error(fmt::format("newick: the tree is incomplete ({} merges for {} leaves)",
                            tree.merges.size(), tree.leaf_count));
  }
  const std::size_t n = tree.leaf_count;
  if (!leaf_names.empty() && leaf_names.size() != n) {
    throw Error(fmt::format("newick: {} leaf names for {} leaves", leaf_names.size(), n));
  }
  const std::size_t node_count = tree.node_count();
  std::vector<double> height(node_count, 0.0);
  std::vector<std::size_t> parent(node_count, node_count);
  for (std::size_t i = 0; i < tree.merges.size(); ++i) {
    height[n + i] = tree.merges[i].height;
    parent[tree.merges[i].left] = n + i;
    parent[tree.merges[i].right] = n + i;
  }

  std::string out;
  out.reserve(node_count * 24);
  auto append_branch_length = [&](std::size_t node) {
    if (parent[node] == node_count) return;  // the root has no branch
    out.push_back(':');
    append_round_trip(out, height[parent[node]] - height[node]);
  };
  auto append_leaf = [&](std::size_t leaf) {
    if (leaf_names.empty()) {
      out.append(std::to_string(leaf));
    } else {
      append_label(out, leaf_names[leaf]);
    }
    append_branch_length(leaf);
  };

  // An explicit stack instead of recursion: caterpillar trees are n deep.
  enum class Stage { open, between, close };
  std::vector<std::pair<std::size_t, Stage>> stack;
  stack.emplace_back(node_count - 1, Stage::open);
  while (!stack.empty()) {
    auto [node, stage] = stack.back();
    stack.pop_back();
    if (node < n) {
      append_leaf(node);
      continue;
    }
    const Merge& merge = tree.merges[node - n];
    switch (stage) {
      case Stage::open:
        out.push_back('(');
        stack.emplace_back(node, Stage::between);
        stack.emplace_back(merge.left, Stage::open);
        break;
      case Stage::between:
        out.push_back(',');
        stack.emplace_back(node, Stage::close);
        stack.emplace_back(merge.right, Stage::open);
        break;
      case Stage::close:
        out.push_back(')');
        append_branch_length(node);
        break;
    }
  }
  out.push_back(';');
  return out;
}

namespace {

// A node as read, before ids are assigned. Leaves and internal nodes share one array.
struct ParsedNode {
  bool is_leaf = true;
  std::size_t leaf_index = 0;           // leaves: order of appearance
  std::size_t children[2] = {0, 0};     // internal: indices into the node array
  std::optional<double> branch_length;  // length of the branch above this node
  double height = 0.0;                  // reconstructed from branch lengths
};

class NewickParser {
 public:
  explicit NewickParser(std::string_view text) : text_(text) {}

  // Leaf names in order of appearance, internal nodes in order of completion (postorder).
  std::vector<std::string> leaf_names;
  std::vector<ParsedNode> nodes;
  std::vector<std::size_t> internal_in_completion_order;

  void parse() {
    // Each open parenthesis holds the nodes read so far inside it.
    std::vector<std::vector<std::size_t>> open_groups;
    bool expect_node = true;
    std::size_t current = 0;
    while (true) {
      skip_space_and_comments();
      if (expect_node) {
        if (peek() == '(') {
          ++pos_;
          open_groups.emplace_back();
          continue;
        }
        current = read_leaf();
        expect_node = false;
        continue;
      }
      const char c = peek();
      if (open_groups.empty()) {
        if (c != ';') fail(at_end() ? "missing the terminating ';'" : "expected ';'");
        ++pos_;
        skip_space_and_comments();
        if (!at_end()) fail("unexpected text after ';'");
        break;
      }
      if (c == ',') {
        ++pos_;
        open_groups.back().push_back(current);
        expect_node = true;
      } else if (c == ')') {
        const std::size_t close_position = pos_;
        ++pos_;
        open_groups.back().push_back(current);
        current = close_group(open_groups.back(), close_position);
        open_groups.pop_back();
      } else {
        fail(at_end() ? "unexpected end of text (unbalanced parentheses)" : "expected ',' or ')'");
      }
    }
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;

  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }
  [[noreturn]] void fail_at(std::size_t position, const std::string& what) const {
    throw InputError(fmt::format("newick: at character {}: {}", position + 1, what));
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  void skip_space_and_comments() {
    while (!at_end()) {
      if (is_newick_space(text_[pos_])) {
        ++pos_;
      } else if (text_[pos_] == '[') {
        const std::size_t close = text_.find(']', pos_);
        if (close == std::string_view::npos) fail("unterminated comment '['");
        pos_ = close + 1;
      } else {
        break;
      }
    }
  }

  // A quoted or unquoted label; empty when none is present.
  std::string read_label() {
    skip_space_and_comments();
    std::string label;
    if (peek() == '\'') {
      const std::size_t open = pos_;
      ++pos_;
      while (true) {
        if (at_end()) fail_at(open, "unterminated quoted label");
        const char c = text_[pos_++];
        if (c == '\'') {
          if (peek() != '\'') break;
          ++pos_;  // a doubled quote stands for one quote
        }
        label.push_back(c);
      }
      return label;
    }
    while (!at_end() && !ends_unquoted_token(text_[pos_])) label.push_back(text_[pos_++]);
    return label;
  }

  std::optional<double> read_branch_length() {
    skip_space_and_comments();
    if (peek() != ':') return std::nullopt;
    ++pos_;
    skip_space_and_comments();
    const std::size_t start = pos_;
    while (!at_end() && !ends_unquoted_token(text_[pos_])) ++pos_;
    const std::string_view token = text_.substr(start, pos_ - start);
    double value = 0.0;
    const auto result = std::from_chars(token.data(), token.data() + token.size(), value);
    if (token.empty() || result.ec != std::errc() || result.ptr != token.data() + token.size()) {
      fail_at(start, fmt::format("branch length '{}' is not a number", token));
    }
    if (!std::isfinite(value) || value < 0.0) {
      fail_at(start, fmt::format("branch length {} is not a finite number >= 0", token));
    }
    return value;
  }

  std::size_t read_leaf() {
    const std::size_t start = pos_;
    std::string name = read_label();
    if (pos_ == start) fail(at_end() ? "unexpected end of text" : "expected a leaf name or '('");
    ParsedNode leaf;
    leaf.is_leaf = true;
    leaf.leaf_index = leaf_names.size();
    leaf.branch_length = read_branch_length();
    leaf_names.push_back(std::move(name));
    nodes.push_back(leaf);
    return nodes.size() - 1;
  }

  std::size_t close_group(const std::vector<std::size_t>& members, std::size_t close_position) {
    if (members.size() != 2) {
      fail_at(close_position, fmt::format("a node with {} children; only binary trees are "
                                          "supported",
                                          members.size()));
    }
    ParsedNode node;
    node.is_leaf = false;
    node.children[0] = members[0];
    node.children[1] = members[1];
    node.height = reconstruct_height(members[0], members[1], close_position);
    read_label();  // an internal node's label carries nothing we use
    node.branch_length = read_branch_length();
    nodes.push_back(node);
    internal_in_completion_order.push_back(nodes.size() - 1);
    return nodes.size() - 1;
  }

  // The height of a parent seen from each child is child height + branch length; the two
  // agree up to rounding for an ultrametric tree. A leaf child gives the parent's height
  // exactly (the writer printed h - 0 with round-trip digits); otherwise the taller child has
  // the shorter branch, whose subtraction h_parent - h_child was exact when h_child >= h/2.
  double reconstruct_height(std::size_t first, std::size_t second, std::size_t close_position) {
    const ParsedNode& a = nodes[first];
    const ParsedNode& b = nodes[second];
    if (!a.branch_length || !b.branch_length) {
      fail_at(close_position, "a child of this node has no branch length (heights are needed)");
    }
    const double from_a = a.height + *a.branch_length;
    const double from_b = b.height + *b.branch_length;
    const double scale = std::max(from_a, from_b);
    constexpr double kUltrametricTolerance = 1e-6;  // relative; generous for 6-digit writers
    if (std::abs(from_a - from_b) > kUltrametricTolerance * scale) {
      fail_at(close_position,
              fmt::format("the tree is not ultrametric: the node's height is {} through one "
                          "child and {} through the other",
                          from_a, from_b));
    }
    double height = 0.0;
    if (a.is_leaf) {
      height = from_a;
    } else if (b.is_leaf) {
      height = from_b;
    } else {
      height = a.height >= b.height ? from_a : from_b;
    }
    return std::max({height, a.height, b.height});
  }
};

}  // namespace

ParsedNewick parse_newick(const std::string& text, const std::vector<std::string>& names_in_order) {
  NewickParser parser(text);
  parser.parse();

  const std::size_t n = parser.leaf_names.size();
  // leaf_id[k] is the id of the k-th leaf in order of appearance.
  std::vector<std::size_t> leaf_id(n);
  ParsedNewick parsed;
  if (names_in_order.empty()) {
    std::iota(leaf_id.begin(), leaf_id.end(), std::size_t{0});
    parsed.leaf_names = std::move(parser.leaf_names);
  } else {
    std::unordered_map<std::string, std::size_t> id_of_name;
    id_of_name.reserve(names_in_order.size());
    for (std::size_t i = 0; i < names_in_order.size(); ++i) {
      if (!id_of_name.emplace(names_in_order[i], i).second) {
        throw InputError(fmt::format("newick: leaf name '{}' is listed twice in the expected names",
                                     names_in_order[i]));
      }
    }
    std::vector<bool> seen(names_in_order.size(), false);
    for (std::size_t k = 0; k < n; ++k) {
      const auto found = id_of_name.find(parser.leaf_names[k]);
      if (found == id_of_name.end()) {
        throw InputError(fmt::format("newick: unknown leaf name '{}'", parser.leaf_names[k]));
      }
      if (seen[found->second]) {
        throw InputError(
            fmt::format("newick: leaf name '{}' appears more than once", parser.leaf_names[k]));
      }
      seen[found->second] = true;
      leaf_id[k] = found->second;
    }
    if (n != names_in_order.size()) {
      const auto missing = std::find(seen.begin(), seen.end(), false) - seen.begin();
      throw InputError(fmt::format("newick: {} leaves but {} expected names; '{}' is missing", n,
                                   names_in_order.size(), names_in_order[missing]));
    }
    parsed.leaf_names = names_in_order;
  }

  // Merges sorted by height; a stable sort keeps completion order among equal heights, which
  // also keeps every child before its parent.
  std::vector<std::size_t> order = parser.internal_in_completion_order;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return parser.nodes[x].height < parser.nodes[y].height;
  });
  std::vector<std::size_t> id_of_node(parser.nodes.size(), 0);
  for (std::size_t k = 0; k < parser.nodes.size(); ++k) {
    if (parser.nodes[k].is_leaf) id_of_node[k] = leaf_id[parser.nodes[k].leaf_index];
  }
  for (std::size_t rank = 0; rank < order.size(); ++rank) id_of_node[order[rank]] = n + rank;

  parsed.tree.leaf_count = n;
  parsed.tree.merges.reserve(order.size());
  for (const std::size_t node_index : order) {
    const ParsedNode& node = parser.nodes[node_index];
    parsed.tree.merges.push_back(
        Merge{id_of_node[node.children[0]], id_of_node[node.children[1]], node.height});
  }
  validate(parsed.tree);
  return parsed;
}

}  // namespace kingman
