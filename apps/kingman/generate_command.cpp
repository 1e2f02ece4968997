// kingman generate: sample a coalescent tree and Brownian data from it (ground truth for tests
// and benchmarks).
#include <fmt/format.h>

#include <memory>
#include <string>

#include "commands.hpp"
#include "kingman/io/output_file.hpp"
#include "kingman/model/generate.hpp"
#include "kingman/tree/linkage.hpp"
#include "kingman/tree/newick.hpp"
#include "number_checks.hpp"

namespace kingman::cli {

namespace {

struct GenerateArguments {
  GenerateOptions options;
  std::string data = "-", newick, linkage, labels;
};

std::string table_csv(const Table& table) {
  std::string out;
  for (std::size_t j = 0; j < table.cols; ++j) out += fmt::format("{}x{}", j ? "," : "", j + 1);
  out += '\n';
  for (std::size_t i = 0; i < table.rows; ++i) {
    for (std::size_t j = 0; j < table.cols; ++j)
      out += fmt::format("{}{}", j ? "," : "", table.at(i, j));
    out += '\n';
  }
  return out;
}

}  // namespace

Action add_generate_command(CLI::App& app) {
  auto args = std::make_shared<GenerateArguments>();
  CLI::App* command =
      app.add_subcommand("generate", "Sample a coalescent tree and Brownian data from the model");
  GenerateOptions& o = args->options;
  command->add_option("-n,--points", o.n, "number of points")
      ->required()
      ->check(CLI::Range(2, 100000000));
  command->add_option("-d,--dims", o.d, "dimensions")->required()->check(positive_number());
  command->add_option("--seed", o.seed, "random seed")->capture_default_str();
  command->add_option("--scale", o.scale, "Lambda = scale * I")->capture_default_str();
  command->add_option("--leaf-variance", o.leaf_variance, "observation noise v0")
      ->capture_default_str();
  command->add_option("--clusters", o.clusters, "labels: cut the true tree into k clusters")
      ->check(positive_number())
      ->capture_default_str();
  command->add_option("--data", args->data, "data CSV ('-' = stdout)")->capture_default_str();
  command->add_option("--newick", args->newick, "true tree as Newick");
  command->add_option("--linkage", args->linkage, "true tree as scipy linkage CSV");
  command->add_option("--labels", args->labels, "cluster label of each point");
  return [args] {
    const GeneratedData generated = generate(args->options);
    write_output_file(args->data, table_csv(generated.data));
    if (!args->newick.empty()) write_output_file(args->newick, to_newick(generated.tree) + "\n");
    if (!args->linkage.empty()) write_output_file(args->linkage, to_linkage_csv(generated.tree));
    if (!args->labels.empty()) {
      std::string text;
      for (std::size_t c : generated.labels.class_of) text += generated.labels.names[c] + "\n";
      write_output_file(args->labels, text);
    }
  };
}

}  // namespace kingman::cli
