#pragma once
// PriorPrior's particle system, for every model. A particle's live clusters are a shared,
// immutable base list plus the few merges made since (PatchedLiveList): a resampled copy shares
// its ancestor's base, a merge appends a patch, and a list is written out in full only when
// copies of one state are about to diverge or its patches grow long. At n = 2400 with 256
// particles, resampled at almost every step down to a few ancestors, that writes a few lists
// per step instead of one per particle. (A flat list per particle, copied at every resampling
// and shifted at every merge, was most of a Brownian run's time at large n, and 22 % of a
// binary one's at n = 2 000: bench/RESULTS.md, Engine: SMC, third and twenty-eighth sessions.)
//
// Model supplies:
//   Node: a cluster (with `id` and `mutable std::uint64_t collect_mark`);
//   kReusesNodes: whether merge() fills a spare node it is handed (the pool then keeps the
//     nodes its sweeps free) or always makes a new one;
//   leaf_count(), fill_leaves(std::span<Node>) (value-initialized nodes, filled in place);
//   merge(a, b, time, duration, id, merged): merges a and b at time - duration, where `time`
//     is the state's last merge time, into `merged` (null, or a spare node when kReusesNodes),
//     and returns the log incremental weight log Z_C(duration);
//   merge_work(): merge()'s rough cost in parallel_for.hpp's units;
//   optionally node_bytes(Algorithm): an upper bound on one merged cluster's bytes, for the
//     pool's cap (ClusterPool::limit).
// Every draw is the one the other systems make for PriorPrior (the same streams, pair
// numbering, weight and merge), so results are the same to the bit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../../scheduler/parallel_for.hpp"
#include "cluster_pool.hpp"
#include "history_pool.hpp"
#include "kingman/error.hpp"
#include "kingman/inference/smc.hpp"
#include "kingman/kernels/rng.hpp"
#include "kingman/model/coalescent_prior.hpp"
#include "live_particle_state.hpp"
#include "pair_numbering.hpp"
#include "smc_loop.hpp"
#include "state_groups.hpp"

namespace kingman::detail {

namespace prior_prior {

// A list of live clusters shared by the particles that were copies of one state.
template <class Node>
struct LiveBase {
  std::vector<const Node*> clusters;
  mutable std::uint64_t mark = 0;  // PriorPriorSystem's sweeps (bases are otherwise immutable)
};

// Patches a particle may collect before its list is written out: a lookup walks them all.
constexpr std::size_t kMostPatches = 16;

// The live clusters of a particle: base with each merge since applied in order (merge k put
// its cluster at position x_k and removed position y_k > x_k of the list as it was then).
template <class Node>
struct PatchedLiveList {
  const LiveBase<Node>* base = nullptr;
  std::vector<std::uint32_t> x, y;
  std::vector<const Node*> made;  // merge k's cluster

  std::size_t size() const { return base->clusters.size() - made.size(); }

  // Position i of the list, traced back through the merges to the base.
  const Node* at(std::size_t i) const {
    for (std::size_t k = made.size(); k-- > 0;) {
      if (i >= y[k]) {
        ++i;
      } else if (i == x[k]) {
        return made[k];
      }
    }
    return base->clusters[i];
  }

  // The whole list, written into `out`: the base with the merged clusters in place and the
  // removed positions left out, in one pass.
  void write_out(std::vector<const Node*>& out) const {
    out = base->clusters;
    thread_local std::vector<std::size_t> removed;
    removed.clear();
    for (std::size_t k = 0; k < made.size(); ++k) {
      out[base_position(x[k], k)] = made[k];
      removed.push_back(base_position(y[k], k));
    }
    std::sort(removed.begin(), removed.end());
    std::size_t kept = 0, next = 0;
    for (std::size_t b = 0; b < out.size(); ++b) {
      if (next < removed.size() && removed[next] == b) {
        ++next;
        continue;
      }
      out[kept++] = out[b];
    }
    out.resize(kept);
  }

  void add(std::size_t at_x, std::size_t at_y, const Node* cluster) {
    x.push_back(static_cast<std::uint32_t>(at_x));
    y.push_back(static_cast<std::uint32_t>(at_y));
    made.push_back(cluster);
  }

  void rebase(const LiveBase<Node>* new_base) {
    base = new_base;
    x.clear();
    y.clear();
    made.clear();
  }

 private:
  // The base position of position i of the list as it was before merge `upto`.
  std::size_t base_position(std::size_t i, std::size_t upto) const {
    for (std::size_t k = upto; k-- > 0;)
      if (i >= y[k]) ++i;
    return i;
  }
};

template <class Node>
struct PriorState {
  PatchedLiveList<Node> live;
  const HistoryNode* history = nullptr;  // HistoryPool's
  double time = 0.0;
};

}  // namespace prior_prior

template <class Model>
class PriorPriorSystem final : public ParticleSystem {
 public:
  using Node = typename Model::Node;

  // The model is built in place from `model_arguments` (it may hold pointers into itself).
  template <typename... ModelArguments>
  explicit PriorPriorSystem(const SmcOptions& options, ModelArguments&&... model_arguments)
      : model_(std::forward<ModelArguments>(model_arguments)...),
        seed_(options.seed),
        particles_(options.particles),
        next_(options.particles) {
    auto first = std::make_unique<prior_prior::LiveBase<Node>>();
    for (const Node& leaf : pool_.keep_block(
             model_.leaf_count(), [&](std::span<Node> leaves) { model_.fill_leaves(leaves); }))
      first->clusters.push_back(&leaf);
    for (State& p : particles_) p.live.base = first.get();
    bases_.push_back(std::move(first));
    if constexpr (requires { model_.node_bytes(Algorithm::priorprior); })
      pool_.limit(model_.node_bytes(Algorithm::priorprior), options.max_cluster_bytes);
  }

  void extend(std::size_t step, std::span<double> log_alpha) override {
    const std::size_t count = particles_.size();
    history_keys_.resize(count);
    for (std::size_t s = 0; s < count; ++s) history_keys_[s] = particles_[s].history;
    groups_.assign(std::span<const HistoryNode* const>(history_keys_));
    sweep_clusters_if_due(count);
    history_.start_step(count, [&](std::size_t s) { return particles_[s].history; });
    created_.resize(count);
    for (auto& node : created_) node = pool_.take_spare();
    new_bases_.resize(groups_.size());
    const std::vector<std::size_t>& members = groups_.members();
    const std::size_t m = particles_.front().live.size();
    // A group's list is written out once (O(m)) when its copies are about to diverge or its
    // patches are many; each member's draw is a merge and O(patches). The draw's cost for
    // parallel_for_work is set so that a Brownian step splits only from ~1800 particles at
    // d = 20: at n = 2400 with 256 particles (a 64 us step) splitting gave no speedup on 2
    // threads and cost 61 % more CPU time (bench/RESULTS.md), so steps of that size run on one
    // thread.
    const std::size_t per_particle = model_.merge_work() + 4 * prior_prior::kMostPatches;
    const std::size_t per_group = m + per_particle * (count / groups_.size());
    // Every particle's stream this step has the same key (rng.hpp): derived once.
    const kernels::RandomStream::Key step_key = kernels::RandomStream::key(seed_, step + 1);
    parallel_for_work(0, groups_.size(), per_group, [&](const auto& range) {
      for (std::size_t g = range.begin(); g != range.end(); ++g) {
        const std::size_t begin = groups_.member_begin(g), end = groups_.member_begin(g + 1);
        const prior_prior::PatchedLiveList<Node>& shared = particles_[groups_.leader(g)].live;
        new_bases_[g].reset();
        if ((end - begin > 1 && !shared.made.empty()) ||
            shared.made.size() >= prior_prior::kMostPatches) {
          auto base = std::make_unique<prior_prior::LiveBase<Node>>();
          shared.write_out(base->clusters);
          for (std::size_t k = begin; k < end; ++k) particles_[members[k]].live.rebase(base.get());
          new_bases_[g] = std::move(base);
        }
        parallel_for_work(begin, end, per_particle, [&](const auto& chunk) {
          for (std::size_t k = chunk.begin(); k != chunk.end(); ++k) {
            const std::size_t s = members[k];
            log_alpha[s] = draw_and_merge(step, s, step_key);
          }
        });
      }
    });
    for (auto& cluster : created_) pool_.adopt(std::move(cluster));
    for (auto& base : new_bases_)
      if (base) bases_.push_back(std::move(base));
    free_unused_bases();
  }

  void resample(std::span<const std::size_t> ancestors) override {
    // A copy is a base pointer and at most kMostPatches patches.
    resample_particles(particles_, next_, ancestors, 4 * prior_prior::kMostPatches);
  }

  MergeTree tree(std::size_t particle) const override {
    return live_merge_tree(particles_[particle], model_.leaf_count());
  }

 private:
  using State = prior_prior::PriorState<Node>;

  // Duration from the prior, a uniform pair, weight Z_C(delta).
  double draw_and_merge(std::size_t step, std::size_t s, const kernels::RandomStream::Key& key) {
    State& state = particles_[s];
    kernels::RandomStream stream(seed_, s, step + 1, key);
    const std::size_t m = state.live.size();
    const double lambda = coalescent_rate(m);
    const std::size_t count = m * (m - 1) / 2;
    const double duration = stream.exponential() / lambda;
    const auto [x, y] = unrank_pair(static_cast<std::size_t>(stream.below(count)), m);
    const Node& a = *state.live.at(x);
    const Node& b = *state.live.at(y);
    std::unique_ptr<Node>& merged = created_[s];
    const double log_alpha =
        model_.merge(a, b, state.time, duration, model_.leaf_count() + step, merged);
    const double t = state.time - duration;
    append_merge(state.history, history_.node(s),
                 Merge{std::min(a.id, b.id), std::max(a.id, b.id), -t});
    state.live.add(x, y, merged.get());
    state.time = t;
    if (std::isnan(log_alpha) || log_alpha == std::numeric_limits<double>::infinity()) {
      throw NumericalError("step " + std::to_string(step + 1) +
                           ": the incremental weight of priorprior is not finite");
    }
    return log_alpha;
  }

  // The pool's sweep marks the clusters of every base in use once, and each particle's own
  // merged clusters.
  void sweep_clusters_if_due(std::size_t count) {
    const std::uint64_t epoch = ++epoch_;
    lists_.clear();
    for (const State& p : particles_) {
      const prior_prior::LiveBase<Node>& base = *p.live.base;
      if (base.mark != epoch) {
        base.mark = epoch;
        lists_.emplace_back(base.clusters);
      }
      if (!p.live.made.empty()) lists_.emplace_back(p.live.made);
    }
    pool_.collect_if_due(count, lists_.size(), [&](std::size_t i) { return lists_[i]; });
  }

  void free_unused_bases() {
    const std::uint64_t epoch = ++epoch_;
    for (const State& p : particles_) p.live.base->mark = epoch;
    std::erase_if(bases_, [epoch](const std::unique_ptr<prior_prior::LiveBase<Node>>& base) {
      return base->mark != epoch;
    });
  }

  Model model_;
  std::uint64_t seed_;
  std::vector<State> particles_, next_;
  ClusterPool<Node> pool_{/*reuse=*/Model::kReusesNodes};
  HistoryPool history_;                                                  // every particle's merges
  std::vector<std::unique_ptr<prior_prior::LiveBase<Node>>> bases_;      // every base in use
  std::vector<std::unique_ptr<prior_prior::LiveBase<Node>>> new_bases_;  // by group, in extend
  std::vector<std::unique_ptr<Node>> created_;
  std::vector<const HistoryNode*> history_keys_;
  StateGroups groups_;
  std::vector<std::span<const Node* const>> lists_;  // what a sweep marks
  std::uint64_t epoch_ = 0;
};

// A law-proposal model (law_proposal_system.hpp), whose merge(a, b, t, id, merged) returns
// log Z_C at t, as PriorPriorSystem's Model: the binary / multinomial model and the Brownian
// model with per-dimension messages. LawModel::kMergeFillsSpareNodes says whether its merge
// fills a node it is handed (then the pool keeps spares) or always makes a new one.
template <class LawModel>
class PriorPriorOnLawModel : public LawModel {
 public:
  using Node = typename LawModel::Node;
  static constexpr bool kReusesNodes = LawModel::kMergeFillsSpareNodes;
  using LawModel::LawModel;

  double merge(const Node& a, const Node& b, double time, double duration, std::size_t id,
               std::unique_ptr<Node>& merged) const {
    return LawModel::merge(a, b, time - duration, id, merged);
  }
};

}  // namespace kingman::detail
