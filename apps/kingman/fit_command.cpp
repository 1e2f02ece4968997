// kingman fit INPUT [options]: the CLI contract of DESIGN.md.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "commands.hpp"
#include "kingman/api.hpp"
#include "kingman/data/labels.hpp"
#include "kingman/data/table_reader.hpp"
#include "kingman/error.hpp"
#include "kingman/io/json_report.hpp"
#include "kingman/io/output_file.hpp"
#include "kingman/memory_budget.hpp"
#include "kingman/tree/linkage.hpp"
#include "kingman/tree/newick.hpp"
#include "kingman/tree/scores.hpp"
#include "number_checks.hpp"
#include "table_options.hpp"

namespace kingman::cli {

namespace {

struct FitArguments {
  std::string input;
  std::string algorithm = "greedy-rate1";
  std::string covariance = "learned";
  std::string resampling = "systematic";
  std::string max_memory;
  std::string pair_storage = "auto";
  std::optional<double> leaf_variance;
  std::string likelihood = "brownian";
  std::string equilibrium = "data";
  std::string mutation_rate;  // empty: 1 for every column
  std::optional<std::size_t> categories;
  std::string newick, linkage, json, labels;
  TableArguments table;
  FitOptions options;
};

}  // namespace

Action add_fit_command(CLI::App& app) {
  auto args = std::make_shared<FitArguments>();
  CLI::App* command = app.add_subcommand(
      "fit", "Infer a tree (greedy) or a posterior over trees and the evidence (SMC) for a table");
  command
      ->add_option("INPUT", args->input, "CSV, TSV or whitespace table; empty, NA or NaN = missing")
      ->required();
  command
      ->add_option("-a,--algorithm", args->algorithm,
                   "greedy-rate1 | greedy-minduration | greedy-maxprob | mgreedy | priorprior | "
                   "priorpost | postpost | mpost1 | mpost2 | race")
      ->capture_default_str();
  command->add_option("-p,--particles", args->options.particles, "SMC particle count")
      ->check(positive_number())
      ->capture_default_str();
  command->add_option("--seed", args->options.seed, "random seed")->capture_default_str();
  command
      ->add_option("--resample", args->resampling,
                   "SMC resampling scheme: systematic | stratified | residual | multinomial")
      ->capture_default_str();
  command
      ->add_option("--ess-threshold", args->options.ess_threshold,
                   "SMC: resample after a step when ESS / particles < R (0: never, 1: every step)")
      ->check(unit_interval())
      ->capture_default_str();
  command->add_option("--threads", args->options.threads, "worker threads (0 = all cores)")
      ->check(non_negative_number())
      ->capture_default_str();
  command->add_flag("--pin-threads", args->options.pin_threads,
                    "each thread on a CPU of its own while the run lasts (for timing on a "
                    "machine the run has to itself; never changes the result)");
  command
      ->add_option("--covariance", args->covariance,
                   "learned | identity | isotropic | diagonal | full")
      ->capture_default_str();
  command->add_option("--leaf-variance", args->leaf_variance,
                      "observation noise v0 of every leaf (default: 0, or 1e-3 x the whitened "
                      "variance when rows repeat)");
  command
      ->add_option("--learning-rounds", args->options.brownian.learning_rounds,
                   "tree / covariance alternations when the covariance is learned")
      ->check(non_negative_number())
      ->capture_default_str();
  command
      ->add_option("--shrinkage", args->options.brownian.shrinkage,
                   "learned covariance: weight of the shared scale, in units of (n-1)/2 "
                   "observations per column")
      ->check(non_negative_number())
      ->capture_default_str();
  command
      ->add_option("--likelihood", args->likelihood,
                   "brownian (continuous data) | binary (0/1) | multinomial (0..K-1)")
      ->capture_default_str();
  command
      ->add_option("--equilibrium", args->equilibrium,
                   "binary/multinomial equilibrium of every column: data (frequencies, add-one "
                   "smoothed) | uniform | Q = P(value 1) for binary | K comma-separated "
                   "probabilities")
      ->capture_default_str();
  command->add_option("--mutation-rate", args->mutation_rate,
                      "binary/multinomial mutation rate: one number for every column, or a "
                      "comma-separated list with one per column (default 1)");
  command->add_option("--categories", args->categories,
                      "multinomial alphabet size K (default: largest value + 1)");
  command->add_option("--max-memory", args->max_memory,
                      "refuse, before allocating, a run that needs more (e.g. 512M, 16G); "
                      "default 3/4 of RAM. Greedy-Rate1 switches to a bounded-memory path");
  command
      ->add_option("--pair-storage", args->pair_storage,
                   "greedy-rate1: full (every pair's score in memory) | bounded (each cluster's "
                   "best partners, O(n d) memory) | auto (bounded where the full store does "
                   "not fit, and for Brownian data where it is faster); greedy-minduration and "
                   "mgreedy on complete Brownian data: full (distances cached) | bounded (none "
                   "kept: O(n d) memory, about twice the time) | auto (full where it fits); "
                   "the same tree")
      ->capture_default_str();
  command->add_option("--newick", args->newick, "write the best tree as Newick ('-' = stdout)");
  command->add_option("--linkage", args->linkage, "write scipy linkage CSV ('-' = stdout)");
  command->add_option("--json", args->json, "write the JSON report ('-' = stdout)");
  command->add_option("--labels", args->labels, "one class label per row: adds scores to the JSON");
  add_table_options(*command, args->table);
  command->add_flag("-v,--verbose", args->options.verbose, "progress lines on stderr");

  return [args] {
    FitOptions options = args->options;
    options.algorithm = parse_algorithm(args->algorithm);
    options.brownian.covariance = parse_covariance(args->covariance);
    options.resampling = parse_resampling(args->resampling);
    if (!args->max_memory.empty())
      options.max_memory = parse_memory_size(args->max_memory, "--max-memory");
    options.pair_storage = parse_pair_storage(args->pair_storage);
    options.brownian.leaf_variance = args->leaf_variance;
    options.likelihood = parse_likelihood(args->likelihood);
    options.discrete.equilibrium = parse_equilibrium(args->equilibrium);
    if (!args->mutation_rate.empty()) {
      options.discrete.mutation_rates = parse_number_list(args->mutation_rate, "--mutation-rate");
    }
    options.discrete.categories = args->categories;

    const Table table = read_table(args->input, table_read_options(args->table));
    std::optional<Labels> labels;
    if (!args->labels.empty()) labels = read_labels(args->labels, table.rows);

    const FitResult result = fit(table, options);
    std::optional<TreeScores> scores;
    if (labels) scores = score_tree(result.best_tree(), *labels);

    // Everything is rendered before anything is written, so an error leaves no output.
    struct Output {
      std::string path, content;
    };
    std::vector<Output> outputs;
    if (!args->newick.empty())
      outputs.push_back({args->newick, to_newick(result.best_tree(), table.row_names) + "\n"});
    if (!args->linkage.empty())
      outputs.push_back({args->linkage, to_linkage_csv(result.best_tree())});
    if (!args->json.empty()) outputs.push_back({args->json, to_json_report(result, scores) + "\n"});
    if (outputs.empty())
      outputs.push_back({"-", to_newick(result.best_tree(), table.row_names) + "\n"});
    for (const Output& output : outputs) write_output_file(output.path, output.content);
    if (options.verbose) {
      std::cerr << "kingman: " << to_string(result.algorithm) << " on " << result.n << " x "
                << result.d << ", log joint " << result.log_joint << ", " << result.seconds
                << " s\n";
    }
  };
}

}  // namespace kingman::cli
