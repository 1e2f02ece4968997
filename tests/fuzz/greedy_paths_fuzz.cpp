// libFuzzer target, differential: Greedy-Rate1's bounded-memory path (greedy_rate1_bounded, k
// candidates per cluster) must return exactly the tree of the full pair cache (greedy_rate1):
// the same merges in the same order at the same heights, bit for bit. The tables are small
// integers on 2-40 rows and 1-3 columns, so ties in distance and duplicate rows are common, with
// missing entries (never a whole row) and a leaf variance from the input.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "fuzz_support.hpp"
#include "kingman/inference/greedy.hpp"
#include "kingman/model/whitened_data.hpp"

using kingman::fuzz::Bytes;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in{data, size};
  const std::uint8_t shape = in.byte(), settings = in.byte();
  kingman::WhitenedData table;
  table.n = 2 + shape % 39;
  table.d = 1 + (shape / 39) % 3;
  table.log_lambda_diagonal.assign(table.d, 0.0);
  for (std::size_t i = 0; i < table.n; ++i) {
    std::size_t observed = 0;
    for (std::size_t j = 0; j < table.d; ++j) {
      const std::uint8_t code = in.byte();
      if (code >= 250) {  // missing (a row with none observed gets a 0 below)
        table.x.push_back(std::numeric_limits<double>::quiet_NaN());
        table.has_missing = true;
      } else {
        table.x.push_back(static_cast<double>(code % 7) - 3.0);
        ++observed;
      }
    }
    if (observed == 0) table.x[i * table.d] = 0.0;
  }
  constexpr double kLeafVariances[] = {0.05, 1e-3, 1.0, 0.5};
  const double leaf_variance = kLeafVariances[settings % 4];
  const kingman::MergeTree full = kingman::greedy_rate1(table, leaf_variance);
  for (const std::size_t k : {std::size_t{1}, std::size_t{2}, std::size_t{32}}) {
    const kingman::MergeTree bounded = kingman::greedy_rate1_bounded(table, leaf_variance, k);
    bool same = bounded.merges.size() == full.merges.size();
    for (std::size_t m = 0; same && m < full.merges.size(); ++m) {
      same = bounded.merges[m].left == full.merges[m].left &&
             bounded.merges[m].right == full.merges[m].right &&
             bounded.merges[m].height == full.merges[m].height;
    }
    if (!same) {
      std::fprintf(stderr, "greedy_paths_fuzz: the bounded path with k = %zu differs\n", k);
      std::abort();
    }
  }
  return 0;
}
