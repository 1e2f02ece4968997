#include "shared_row_sums.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "../../scheduler/parallel_for.hpp"
#include "kingman/kernels/pair_kernels.hpp"
#include "kingman/kernels/vector_math.hpp"

namespace kingman::detail {

bool SharedRowSums::prepare(std::span<const ParticleState* const> states,
                            const LeafPairCache& cache, std::size_t first_id, double lambda,
                            std::uint64_t stamp, const SharingRule& rule) {
  if (states.size() < 2) return false;
  const std::size_t n = cache.leaf_count();
  const std::size_t m = states.front()->live.size();
  const std::size_t ids = 2 * n - m;  // node ids so far: n leaves, n - m merged clusters
  // The rule below with the least remainder possible (an ancestor one step back, nothing
  // contested): early steps stop here, before any walk.
  auto pays = [&](std::size_t remainder, std::size_t first_recent) {
    return first_recent > first_id &&
           rule.prefix_share * (remainder + rule.row_cost) <= first_recent - first_id;
  };
  if (!pays(1, ids - 1)) return false;
  // The latest common ancestor: the states' histories (all of the same length) stepped back
  // together until they meet; `depth` steps back.
  walk_.resize(states.size());
  for (std::size_t g = 0; g < states.size(); ++g) walk_[g] = states[g]->history;
  auto met = [&] {
    return std::all_of(walk_.begin(), walk_.end(),
                       [&](const HistoryNode* h) { return h == walk_.front(); });
  };
  std::size_t depth = 0;
  while (!met()) {
    for (const HistoryNode*& h : walk_) h = h ? h->previous : nullptr;
    ++depth;
    if (!pays(depth, ids - depth)) return false;  // too far back: stop walking
  }
  const std::size_t first_recent = ids - depth;
  // Contested: clusters of the ancestor that some lineage merged since.
  if (marks_.size() < 2 * n) marks_.resize(2 * n, 0);
  contested_.clear();
  for (const ParticleState* state : states) {
    const HistoryNode* h = state->history;
    for (std::size_t k = 0; k < depth; ++k, h = h->previous) {
      for (const std::size_t id : {h->merge.left, h->merge.right}) {
        if (id >= first_id && id < first_recent && marks_[id] != stamp) {
          marks_[id] = stamp;
          contested_.push_back(id);
        }
      }
    }
  }
  if (!pays(contested_.size() + depth, first_recent)) return false;
  std::sort(contested_.begin(), contested_.end());
  // h_y of the uncontested clusters, which every state lists (so the first one does).
  common_.assign(first_recent - first_id, 0.0);
  listed_.clear();
  exponents_.clear();
  for (const ClusterNode* c : states.front()->live) {
    if (c->id < first_id || c->id >= first_recent || marks_[c->id] == stamp) continue;
    listed_.push_back(c->id - first_id);
    exponents_.push_back(cache.weight_scale(*c) + 0.5 * lambda * c->offset());
  }
  const double largest = kernels::max_array(exponents_.data(), exponents_.size());
  if (!std::isfinite(largest)) return false;
  for (double& e : exponents_) e -= largest;
  kernels::exp_array(exponents_.data(), exponents_.data(), exponents_.size());
  for (std::size_t k = 0; k < listed_.size(); ++k) common_[listed_[k]] = exponents_[k];
  stamp_ = stamp;
  first_id_ = first_id;
  first_recent_ = first_recent;
  log_scale_ = largest;
  return true;
}

void SharedRowSums::compute_common_parts(std::span<const ClusterNode* const> live) const {
  parallel_for_work(0, live.size(), 2 * (first_recent_ - first_id_) + 1, [&](const auto& range) {
    for (std::size_t x = range.begin(); x != range.end(); ++x) {
      if (live[x]->id < first_id_) continue;
      // The state's newest cluster gets its row in its group's task (and its P_z there).
      const auto& z = static_cast<const Mpost2ClusterNode&>(*live[x]);
      if (!z.pair_weight_row.empty()) common_part(z);
    }
  });
}

double SharedRowSums::common_part(const Mpost2ClusterNode& z) const {
  std::atomic_ref<std::uint64_t> stamp(z.shared_stamp);
  std::atomic_ref<double> part(z.shared_part);
  if (stamp.load(std::memory_order_acquire) == stamp_) return part.load(std::memory_order_relaxed);
  const std::size_t end = std::min(z.id, first_recent_);
  const double value = end > first_id_ ? kernels::dot(z.pair_weight_row.data() + first_id_,
                                                      common_.data(), end - first_id_)
                                       : 0.0;
  // Tasks that compute it at the same time store the same value.
  part.store(value, std::memory_order_relaxed);
  stamp.store(stamp_, std::memory_order_release);
  return value;
}

void SharedRowSums::StateView::assign(const SharedRowSums& shared, double lambda, double time,
                                      double shift, const double* factor) {
  shared_ = &shared;
  factor_ = factor;
  scale_ = std::exp(shared.log_scale_ - 0.5 * lambda * time - shift);
  listed_ids_.clear();
  listed_factors_.clear();
  for (const std::size_t id : shared.contested_) {
    if (factor[id] > 0.0) {
      listed_ids_.push_back(id);
      listed_factors_.push_back(factor[id]);
    }
  }
}

double SharedRowSums::StateView::row_sum(const Mpost2ClusterNode& z) const {
  const double* row = z.pair_weight_row.data();
  double remainder = 0.0;
  for (std::size_t k = 0; k < listed_ids_.size() && listed_ids_[k] < z.id; ++k)
    remainder += row[listed_ids_[k]] * listed_factors_[k];
  const std::size_t first_recent = shared_->first_recent_;
  if (z.id > first_recent)
    remainder += kernels::dot(row + first_recent, factor_ + first_recent, z.id - first_recent);
  return scale_ * shared_->common_part(z) + remainder;
}

}  // namespace kingman::detail
