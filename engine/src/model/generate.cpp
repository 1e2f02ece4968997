#include "kingman/model/generate.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "kingman/error.hpp"
#include "kingman/kernels/rng.hpp"
#include "kingman/model/coalescent_prior.hpp"

namespace kingman {

std::vector<std::size_t> cut_tree(const MergeTree& tree, std::size_t clusters) {
  const std::size_t n = tree.leaf_count;
  if (clusters < 1 || clusters > n) {
    throw OptionError("cannot cut a tree of " + std::to_string(n) + " leaves into " +
                      std::to_string(clusters) + " clusters");
  }
  // Union the first n-k merges; each remaining root is one cluster.
  std::vector<std::size_t> parent(tree.node_count());
  for (std::size_t i = 0; i < parent.size(); ++i) parent[i] = i;
  const std::size_t kept = n - clusters;
  for (std::size_t k = 0; k < kept && k < tree.merges.size(); ++k) {
    parent[tree.merges[k].left] = n + k;
    parent[tree.merges[k].right] = n + k;
  }
  auto root = [&](std::size_t v) {
    while (parent[v] != v) v = parent[v];
    return v;
  };
  std::vector<std::size_t> label(n), id_of_root(tree.node_count(), n);
  std::size_t next = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t r = root(i);
    if (id_of_root[r] == n) id_of_root[r] = next++;
    label[i] = id_of_root[r];
  }
  return label;
}

GeneratedData generate(const GenerateOptions& options) {
  const std::size_t n = options.n, d = options.d;
  if (n < 2) throw OptionError("generate: -n must be at least 2");
  if (d < 1) throw OptionError("generate: -d must be at least 1");
  if (!(options.scale > 0) || !std::isfinite(options.scale))
    throw OptionError("generate: --scale must be a positive number");
  if (!(options.leaf_variance >= 0) || !std::isfinite(options.leaf_variance))
    throw OptionError("generate: --leaf-variance must be >= 0");

  GeneratedData out;
  out.tree.leaf_count = n;
  // Tree: the next merge among m clusters comes after Exp(lambda_m); the pair is uniform.
  kernels::RandomStream tree_stream(options.seed, 0, 0);
  std::vector<std::size_t> live(n);
  for (std::size_t i = 0; i < n; ++i) live[i] = i;
  double height = 0.0;
  for (std::size_t k = 0; k + 1 < n; ++k) {
    height += tree_stream.exponential() / coalescent_rate(live.size());
    const std::size_t x = tree_stream.below(live.size());
    std::size_t y = tree_stream.below(live.size() - 1);
    if (y >= x) ++y;
    const std::size_t a = live[x], b = live[y];
    out.tree.merges.push_back({std::min(a, b), std::max(a, b), height});
    live[std::max(x, y)] = live.back();
    live.pop_back();
    live[std::min(x, y)] = n + k;
  }
  // Data: the root sits at 0; each edge adds N(0, length * scale) per dimension.
  const std::size_t nodes = out.tree.node_count();
  std::vector<double> value(nodes * d, 0.0), node_height(nodes, 0.0);
  std::vector<std::size_t> parent(nodes, nodes);
  for (std::size_t k = 0; k + 1 < n; ++k) {
    node_height[n + k] = out.tree.merges[k].height;
    parent[out.tree.merges[k].left] = n + k;
    parent[out.tree.merges[k].right] = n + k;
  }
  kernels::RandomStream data_stream(options.seed, 1, 0);
  for (std::size_t v = nodes - 1; v-- > 0;) {  // parents have larger ids than children
    const std::size_t p = parent[v];
    const double sd = std::sqrt((node_height[p] - node_height[v]) * options.scale);
    for (std::size_t j = 0; j < d; ++j)
      value[v * d + j] = value[p * d + j] + sd * data_stream.normal();
  }
  out.data.rows = n;
  out.data.cols = d;
  out.data.source = "generated";
  out.data.values.resize(n * d);
  const double noise_sd = std::sqrt(options.leaf_variance * options.scale);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j)
      out.data.values[i * d + j] = value[i * d + j] + noise_sd * data_stream.normal();
  const std::vector<std::size_t> clusters = cut_tree(out.tree, std::min(options.clusters, n));
  std::vector<std::string> names;
  for (std::size_t c : clusters) names.push_back(std::to_string(c));
  out.labels = labels_from_strings(names);
  return out;
}

}  // namespace kingman
