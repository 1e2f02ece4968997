#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <utility>

#include "../inference/smc/step_pair_tails.hpp"
#include "../memory/large_array.hpp"
#include "../scheduler/run_arena.hpp"
#include "fit_discrete.hpp"
#include "kingman/api.hpp"
#include "kingman/data/duplicates.hpp"
#include "kingman/error.hpp"
#include "kingman/inference/greedy.hpp"
#include "kingman/inference/smc.hpp"
#include "kingman/memory_budget.hpp"
#include "kingman/model/covariance.hpp"
#include "kingman/model/numeric_range.hpp"
#include "kingman/model/tree_likelihood.hpp"
#include "smc_memory.hpp"

namespace kingman {

namespace {

void check_options(const Table& data, const FitOptions& options) {
  if (data.rows < 2) {
    throw InputError(data.source + ": kingman needs at least two rows, got " +
                     std::to_string(data.rows));
  }
  if (data.cols == 0) throw InputError(data.source + ": the table has no numeric columns");
  if (options.likelihood != Likelihood::brownian) {
    // The binary / multinomial SMC runs no greedy tree: the storage would have nothing to do.
    if (options.pair_storage != PairStorage::automatic && !is_greedy(options.algorithm)) {
      throw OptionError("--pair-storage applies to the greedy algorithms with --likelihood " +
                        to_string(options.likelihood) + ", not to " + to_string(options.algorithm));
    }
    check_pair_storage(options.algorithm, options.pair_storage);
    return;  // the rest is checked by fit_discrete
  }
  const DiscreteOptions& discrete = options.discrete;
  for (const auto& [used, option] :
       {std::pair{discrete.equilibrium.kind != EquilibriumKind::data, "--equilibrium"},
        std::pair{!discrete.mutation_rates.empty(), "--mutation-rate"}}) {
    if (used) {
      throw OptionError(std::string(option) +
                        " applies to --likelihood binary or multinomial, not brownian");
    }
  }
  if (discrete.categories) {
    throw OptionError("--categories applies to --likelihood multinomial, not brownian");
  }
  if (options.brownian.leaf_variance &&
      !(*options.brownian.leaf_variance >= 0 && std::isfinite(*options.brownian.leaf_variance))) {
    throw OptionError("--leaf-variance must be a finite number >= 0");
  }
  if (options.brownian.learning_rounds < 0) throw OptionError("learning rounds must be >= 0");
  if (!(options.brownian.shrinkage >= 0) || !std::isfinite(options.brownian.shrinkage)) {
    throw OptionError("covariance shrinkage must be a finite number >= 0");
  }
  check_pair_storage(options.algorithm, options.pair_storage);
  if (data.has_missing() && options.brownian.covariance == CovarianceKind::full) {
    throw OptionError("--covariance full needs complete data, but " + data.source +
                      " has missing entries; use learned, diagonal, isotropic or identity");
  }
}

// The data whitened by `covariance`, checked like the data themselves (check_brownian_range):
// a learned scale can shrink a column's differences (identity whitening changes nothing).
WhitenedData whiten_in_range(const Table& data, const Covariance& covariance) {
  WhitenedData whitened = whiten(data, covariance);
  if (covariance.kind != CovarianceKind::identity) {
    check_brownian_range(
        whitened.x.data(), whitened.n, whitened.d,
        data.source + " (whitened by the " + to_string(covariance.kind) + " covariance)");
  }
  return whitened;
}

// Mean per-column variance of whitened data, the time scale of a typical pairwise coalescence.
double mean_whitened_variance(const WhitenedData& w) {
  double total = 0.0;
  for (std::size_t j = 0; j < w.d; ++j) {
    double sum = 0.0, sum_sq = 0.0, count = 0.0;
    for (std::size_t i = 0; i < w.n; ++i) {
      const double v = w.x[i * w.d + j];
      if (std::isnan(v)) continue;
      sum += v;
      sum_sq += v * v;
      count += 1;
    }
    if (count > 1) total += std::max(0.0, (sum_sq - sum * sum / count) / (count - 1));
  }
  const double mean = total / static_cast<double>(w.d);
  return mean > 0 ? mean : 1.0;
}

// Rows that coincide in whitened coordinates, what the model sees: rows repeated in the file,
// and rows whose differences vanish below double precision once a column is centred and scaled
// (1e-7 apart beside a value of -1e10: the centred values round to the same double), which with
// leaf variance 0 made a merged cluster's variance 0 / 0.
struct CoincidentRows {
  enum class Kind { in_file, once_whitened, where_both_observed };
  std::size_t first = 0, second = 0;  // 0-based
  Kind kind = Kind::in_file;
  std::string describe(const Table& data) const {
    std::string rows = data.source + ": rows " + std::to_string(first + 1) + " and " +
                       std::to_string(second + 1) + " (data rows, 1-based) ";
    switch (kind) {
      case Kind::in_file:
        return rows + "are identical";
      case Kind::once_whitened:
        return rows +
               "differ in the file but coincide once whitened (their differences are below "
               "double precision at the columns' scale)";
      default:
        return rows + "agree on every column both observe (the others are missing)";
    }
  }
};

// Above this many rows the scan for rows that agree where both are observed (O(rows^2)) is
// skipped: the greedy algorithms then stop with an error naming the merge whose height is not
// a number, and the SMC ones (too slow at that size on missing data anyway) with the pair law's.
constexpr std::size_t kLargestAgreementScan = 20000;

std::optional<CoincidentRows> coincident_rows(const Table& data, const WhitenedData& whitened) {
  using Kind = CoincidentRows::Kind;
  if (const auto in_file = find_duplicate_rows(data))
    return CoincidentRows{in_file->first, in_file->second, Kind::in_file};
  if (const auto whitened_pair = find_duplicate_rows(whitened.x.data(), whitened.n, whitened.d))
    return CoincidentRows{whitened_pair->first, whitened_pair->second, Kind::once_whitened};
  if (whitened.has_missing && whitened.n <= kLargestAgreementScan) {
    if (const auto pair =
            find_rows_agreeing_where_both_observed(whitened.x.data(), whitened.n, whitened.d))
      return CoincidentRows{pair->first, pair->second, Kind::where_both_observed};
  }
  return std::nullopt;
}

// v0 as documented: the user's value; else 0, unless rows coincide, in which case a thousandth
// of the typical pairwise coalescence time keeps the density finite.
double choose_leaf_variance(const Table& data, const FitOptions& options,
                            const WhitenedData& first_whitened) {
  const auto coincident = coincident_rows(data, first_whitened);
  if (options.brownian.leaf_variance) {
    if (*options.brownian.leaf_variance == 0.0 && coincident) {
      throw InputError(coincident->describe(data) +
                       "; with leaf variance 0 the model's density is infinite. Pass "
                       "--leaf-variance V > 0 or remove duplicates");
    }
    return *options.brownian.leaf_variance;
  }
  if (!coincident) return 0.0;
  const double v0 = 1e-3 * mean_whitened_variance(first_whitened);
  if (options.verbose) {
    std::cerr << "kingman: " << coincident->describe(data) << "; using leaf variance " << v0
              << "\n";
  }
  return v0;
}

// After a learning round's whitening: rows that now coincide with leaf variance 0 are refused as
// choose_leaf_variance refuses them.
void check_no_coincident_rows(const Table& data, const WhitenedData& whitened,
                              double leaf_variance) {
  if (leaf_variance > 0.0) return;
  if (const auto coincident = coincident_rows(data, whitened)) {
    throw InputError(coincident->describe(data) +
                     " after the covariance was learned; with leaf variance 0 the model's density "
                     "is infinite. Pass --leaf-variance V > 0 or rescale the data");
  }
}

// SMC keeps the leaf-pair cache (MPost2: two values per pair; the race has none), its step
// tables, and per particle its lists and its clusters' messages and rows (smc_memory.hpp).
detail::SmcMemory brownian_smc_memory(const Table& data, const FitOptions& options,
                                      std::size_t budget) {
  const double table_bytes = static_cast<double>(detail::step_table_bytes(budget));
  const double n = static_cast<double>(data.rows), d = static_cast<double>(data.cols);
  const double particles = static_cast<double>(options.particles);
  // The leaf-pair cache (pair_cache.hpp): none for the race and PriorPrior; MPost2 keeps
  // distances and weights, and with leaf sums the weights by columns too.
  const bool leaf_sums = mpost2_uses_leaf_sums(options.mpost2_row_sums, data.rows);
  double per_pair = options.algorithm == Algorithm::mpost2 ? (leaf_sums ? 24.0 : 16.0) : 8.0;
  // Data with missing entries take the per-dimension system (missing_smc.cpp), which keeps no
  // pair cache but the law-proposal system's step tables; its nodes hold a mean and a variance
  // per dimension (2d, as counted below).
  if (options.algorithm == Algorithm::race || options.algorithm == Algorithm::priorprior ||
      data.has_missing())
    per_pair = 0.0;
  detail::SmcMemory memory;
  // Each table of 8 bytes per pair is a block of its own (large_array.hpp).
  memory.fixed =
      per_pair / 8.0 * detail::large_block_footprint(0.5 * n * (n - 1.0) * sizeof(double));
  // PostPost and MPost1 share a step's pair kernels in a table over the clusters that several
  // states list (at most 2n of them), within a fixed size (step_pair_tails.hpp).
  if ((options.algorithm == Algorithm::postpost || options.algorithm == Algorithm::mpost1) &&
      !data.has_missing()) {
    memory.fixed += std::min(
        table_bytes, 2.0 * n * n * static_cast<double>(detail::StepPairTails::kBytesPerPair));
  }
  if (data.has_missing()) {
    memory.fixed += detail::law_proposal_table_bytes(
        options.algorithm, data.rows, options.particles, detail::run_threads(options.threads),
        static_cast<std::size_t>(table_bytes));
  }
  // Per particle and point: two live lists, a merge of its history, its result tree twice.
  memory.fixed += particles * n * 96.0;
  // The race: each particle's rows of listed clocks, in two generations (race_engine.hpp).
  if (options.algorithm == Algorithm::race) memory.fixed += particles * n * 2.0 * 96.0;
  // PriorPost, PostPost, MPost1 and MPost2 on complete data: each thread's candidates (scores,
  // weights and the pairs' distances and offsets where the proposal reads them).
  if (!data.has_missing() && options.algorithm != Algorithm::race &&
      options.algorithm != Algorithm::priorprior)
    memory.fixed +=
        static_cast<double>(detail::run_threads(options.threads)) * 0.5 * n * (n - 1.0) * 32.0;
  memory.clusters = particles * n * (2.0 * d * 8.0 + 32.0);
  // MPost2 on missing entries: each cluster keeps two terms per partner of smaller id
  // (missing_smc.cpp), up to 2n of them.
  if (data.has_missing() && options.algorithm == Algorithm::mpost2)
    memory.clusters += particles * n * (2.0 * n) * 2.0 * 8.0;
  return memory;
}

// Refuses, before anything is allocated, an SMC run whose memory cannot fit the budget.
void check_smc_memory(const FitOptions& options, std::size_t rows, std::size_t cols,
                      const detail::SmcMemory& memory, std::size_t budget) {
  if (memory.total() > static_cast<double>(budget)) {
    throw ResourceError(
        to_string(options.algorithm) + " with " + std::to_string(options.particles) +
        " particles on " + std::to_string(rows) + " x " + std::to_string(cols) + " needs about " +
        format_bytes(memory.total()) + ", more than the memory budget (--max-memory) of " +
        format_bytes(static_cast<double>(budget)));
  }
}

}  // namespace

std::size_t smc_memory_bytes(const Table& data, const FitOptions& options) {
  if (options.likelihood != Likelihood::brownian)
    return detail::discrete_smc_memory_bytes(data, options);
  return static_cast<std::size_t>(
      brownian_smc_memory(data, options, detail::run_memory_budget(options)).total());
}

FitResult fit(const Table& data, const FitOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  check_options(data, options);
  if (options.likelihood != Likelihood::brownian) {
    FitResult result = detail::fit_discrete(data, options);
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  }
  const bool smc = !is_greedy(options.algorithm);
  check_brownian_range(data.values.data(), data.rows, data.cols, data.source);
  const BrownianOptions& brownian = options.brownian;
  Covariance covariance = initial_covariance(data, brownian.covariance, brownian.shrinkage);
  WhitenedData whitened = whiten_in_range(data, covariance);
  const double leaf_variance = choose_leaf_variance(data, options, whitened);

  const int rounds = brownian.covariance == CovarianceKind::identity ? 0 : brownian.learning_rounds;
  // Lambda is learned with the greedy tree (Greedy-Rate1 for SMC runs, which then use it fixed).
  const Algorithm tree_algorithm = smc ? Algorithm::greedy_rate1 : options.algorithm;
  MergeTree tree;
  const std::size_t budget = detail::run_memory_budget(options);
  detail::SmcMemory smc_memory;
  if (smc) {
    smc_memory = brownian_smc_memory(data, options, budget);
    check_smc_memory(options, data.rows, data.cols, smc_memory, budget);
  }
  // The greedy trees score their pairs on the requested threads (generic_linkage.hpp); the
  // tree does not depend on how many.
  detail::RunArena greedy_arena(options.threads, options.pin_threads);
  PairStorage pair_storage = PairStorage::automatic;  // as the greedy runs used it
  greedy_arena.execute([&] {
    if (!smc || rounds > 0) {
      tree = run_greedy(whitened, leaf_variance, tree_algorithm, budget, options.pair_storage,
                        &pair_storage);
    }
    for (int round = 1; round <= rounds; ++round) {
      covariance =
          map_covariance(data, tree, leaf_variance, brownian.covariance, brownian.shrinkage);
      whitened = whiten_in_range(data, covariance);
      check_no_coincident_rows(data, whitened, leaf_variance);
      tree = run_greedy(whitened, leaf_variance, tree_algorithm, budget, options.pair_storage,
                        &pair_storage);
      if (options.verbose) {
        std::cerr << "kingman: covariance round " << round << "/" << rounds << ", log joint "
                  << tree_density(whitened, leaf_variance, tree).log_joint() << "\n";
      }
    }
  });

  FitResult result;
  result.algorithm = options.algorithm;
  result.n = data.rows;
  result.d = data.cols;
  result.seed = options.seed;
  result.pin_threads = options.pin_threads;
  result.threads = greedy_arena.threads();
  if (!smc) result.pair_storage = pair_storage;
  if (smc) {
    SmcOptions smc_options;
    smc_options.proposal = options.algorithm;
    smc_options.particles = options.particles;
    smc_options.seed = options.seed;
    smc_options.threads = options.threads;
    smc_options.pin_threads = options.pin_threads;
    smc_options.resampling = options.resampling;
    smc_options.ess_threshold = options.ess_threshold;
    smc_options.mpost2_row_sums = options.mpost2_row_sums;
    smc_options.verbose = options.verbose;
    smc_options.max_cluster_bytes = smc_memory.cluster_budget(budget);
    smc_options.step_table_bytes = detail::step_table_bytes(budget);
    check_smc_scale(
        whitened.x.data(), whitened.n, whitened.d,
        brownian.covariance == CovarianceKind::identity
            ? data.source
            : data.source + " (whitened by the " + to_string(brownian.covariance) + " covariance)");
    SmcResult run = run_smc(whitened, leaf_variance, smc_options);
    result.threads = run.threads;
    result.log_evidence = run.log_evidence;
    result.ess = std::move(run.ess);
    result.resampled_at = std::move(run.resampled_at);
    for (std::size_t s = 0; s < run.particles.size(); ++s) {
      result.particles.push_back(Particle{run.particles[s].log_weight, run.particles[s].weight,
                                          std::move(run.particles[s].tree)});
      // Highest weight wins; ties go to the lowest index.
      if (result.particles[s].weight > result.particles[result.best].weight) result.best = s;
    }
  } else {
    result.particles.push_back(Particle{0.0, 1.0, std::move(tree)});
    result.best = 0;
  }
  result.log_joint = tree_density(whitened, leaf_variance, result.best_tree()).log_joint();
  result.covariance_diagonal.assign(covariance.diagonal.data(),
                                    covariance.diagonal.data() + covariance.diagonal.size());
  result.leaf_variance = leaf_variance;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace kingman
