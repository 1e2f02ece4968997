// Fits a 5-point table through the installed public API and checks the tree's shape.
#include <cstdio>
#include <exception>

#include <kingman/api.hpp>

int main() {
  kingman::Table table;
  table.rows = 5;
  table.cols = 2;
  table.values = {0.0, 0.0,  //
                  0.1, 0.2,  //
                  5.0, 5.1,  //
                  5.2, 4.9,  //
                  9.0, 0.5};

  kingman::FitOptions options;
  options.algorithm = kingman::Algorithm::greedy_rate1;
  options.brownian.covariance = kingman::CovarianceKind::identity;
  options.threads = 1;

  try {
    const kingman::FitResult result = kingman::fit(table, options);
    const kingman::MergeTree& tree = result.best_tree();
    if (tree.leaf_count != 5 || tree.merges.size() != 4) {
      std::fprintf(stderr, "consumer: expected 5 leaves and 4 merges, got %zu and %zu\n",
                   tree.leaf_count, tree.merges.size());
      return 1;
    }
    std::printf("consumer: ok, 4 merges, log joint %g\n", result.log_joint);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: fit failed: %s\n", e.what());
    return 1;
  }
  return 0;
}
