#include "step_pair_tails.hpp"

#include <algorithm>
#include <limits>

#include "../../scheduler/parallel_for.hpp"

namespace kingman::detail {

bool StepPairTails::prepare(std::span<const ParticleState* const> states, double p, double lambda,
                            const LeafPairCache& cache, bool floor_chi) {
  ++generation_;
  const std::uint64_t counting = 2 * generation_;
  indexed_stamp_ = counting + 1;
  p_ = p;
  lambda_ = lambda;
  indexed_.clear();
  enabled_ = false;
  if (states.empty()) return false;
  // How many of the states list each cluster (in tails_index while counting)...
  for (const ParticleState* state : states) {
    for (const ClusterNode* c : state->live) {
      if (c->tails_stamp != counting) {
        c->tails_stamp = counting;
        c->tails_index = 1;
      } else {
        ++c->tails_index;
      }
    }
  }
  // ...then an index for each listed twice or more, in the order the states list them. (Pairs
  // of two such clusters that no state lists together get a kernel too; they are few: the
  // clusters that only some of the states list are those created since their ancestors
  // parted, a few steps back.)
  for (const ParticleState* state : states) {
    for (const ClusterNode* c : state->live) {
      if (c->tails_stamp == counting && c->tails_index >= 2) {
        c->tails_stamp = indexed_stamp_;
        c->tails_index = static_cast<std::uint32_t>(indexed_.size());
        indexed_.push_back(c);
      }
    }
  }
  const std::size_t count = indexed_.size();
  const std::size_t pairs = count * (count > 0 ? count - 1 : 0) / 2;
  if (pairs * kBytesPerPair > largest_table_bytes_) {
    indexed_.clear();
    enabled_ = false;
    return false;
  }
  enabled_ = true;
  cores_.resize(pairs);
  // Row i: the pairs (i, j < i), a GIG kernel each (about 4000 operations).
  parallel_for_work(1, count, 2000 * count + 1, [&](const auto& rows) {
    for (std::size_t i = rows.begin(); i != rows.end(); ++i) {
      kernels::GigUpperTail::Core* row = cores_.data() + i * (i - 1) / 2;
      for (std::size_t j = 0; j < i; ++j) {
        // Two clusters that never lived together have no distance, and no state needs their
        // kernel: clusters of one step of different lineages share their node id (the later
        // one's row has no entry for it), and otherwise the later one's row holds NaN or the
        // distance to another cluster with that id.
        if (indexed_[i]->id == indexed_[j]->id) continue;
        double chi = cache.eps(*indexed_[i], *indexed_[j]);
        if (!(chi >= 0.0)) continue;
        if (floor_chi) chi = std::max(chi, std::numeric_limits<double>::min());
        row[j] = kernels::GigUpperTail::core(p_, chi, lambda_);
      }
    }
  });
  return true;
}

}  // namespace kingman::detail
