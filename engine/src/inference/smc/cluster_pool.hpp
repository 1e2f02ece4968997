#pragma once
// Owner of a particle system's clusters. Particles list their live clusters by plain pointers,
// so copying a particle (resampling, or sharing a group's rows) copies pointers and touches no
// reference count. With std::shared_ptr every such copy is an atomic update of the cluster's
// count as soon as a second thread exists, on counts (the leaves' above all) that every particle
// shares: at n = 800 that made PriorPrior's resampling, a serial step, take three times the CPU
// time of the whole run on one thread.
//
// The pool frees the clusters no particle lists any more by mark and sweep, run when it holds
// twice what it kept at the last sweep plus one step's worth of new clusters. So it holds at
// most about twice the clusters some particle still lists, plus a step's new ones (the same
// order of memory as exact reference counting), and a sweep's O(particles x live) work is spread
// over at least as many steps as it has kept clusters per particle.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../scheduler/parallel_for.hpp"
#include "kingman/error.hpp"
#include "kingman/memory_budget.hpp"

namespace kingman::detail {

// Node has a member `mutable std::uint64_t collect_mark` (suitably aligned for
// std::atomic_ref), which only the pool uses.
//
// With reuse on, a sweep keeps the clusters it frees as spares for take_spare() instead of
// destroying them, buffers and all: a system that makes one cluster per particle and step then
// stops allocating once the pool has reached its steady size (malloc and free of a node and its
// rows were ~10 % of an MPost2 run). Spares are what a sweep freed, so the pool never holds more
// than it held just before its last sweep.
template <typename Node>
class ClusterPool {
 public:
  explicit ClusterPool(bool reuse = false) : reuse_(reuse) {}

  // Caps what the step-made clusters may hold at `budget` bytes, each counted as `node_bytes`
  // (an upper bound on one cluster with its buffers); 0 leaves them unchecked. Without
  // resampling the particles share no clusters, and where a cluster carries a row per partner
  // they then hold O(n^2) numbers each, beyond any estimate made before the run: before a step
  // that could pass the cap the pool sweeps (and frees its spares), and if the clusters still
  // listed leave no room for the step's new ones, collect_if_due throws ResourceError.
  void limit(std::size_t node_bytes, std::size_t budget) {
    node_bytes_ = node_bytes;
    budget_ = budget;
  }

  // A cluster freed by an earlier sweep, or null when none is left (always null without reuse).
  // Its fields hold stale values for the caller to overwrite. Not thread-safe: take spares
  // before a parallel loop.
  std::unique_ptr<Node> take_spare() {
    if (spare_.empty()) return nullptr;
    std::unique_ptr<Node> node = std::move(spare_.back());
    spare_.pop_back();
    return node;
  }

  // `count` clusters kept for the whole run (the leaves), value-initialized in one block and
  // then filled in place by fill(std::span<Node>), so that Node need not be movable (one with a
  // std::once_flag is not). At most one block per pool. Sweeps recognise its clusters by address
  // and pass over them without reading them: at n = 2400 the leaves were most of what a
  // PriorPrior sweep read, a cache miss each. (In a binary run at n = 2 000 with 256 particles,
  // whose leaves were separate nodes, the sweep fell from 22.5 % to 17.4 % of the time with
  // them in a block: bench/RESULTS.md, Engine: SMC, twenty-eighth session.)
  template <typename Fill>
  std::span<const Node> keep_block(std::size_t count, const Fill& fill) {
    if (block_) throw std::logic_error("ClusterPool: a second block of kept clusters");
    block_ = std::make_unique<Node[]>(count);
    block_size_ = count;
    fill(std::span<Node>(block_.get(), count));
    return {block_.get(), count};
  }

  // A cluster made by a step. Not thread-safe: call after the step's parallel loop.
  const Node* adopt(std::unique_ptr<Node> node) {
    merged_.push_back(std::move(node));
    return merged_.back().get();
  }

  // Frees the step-made clusters that no particle lists, if a sweep is due. live_of(s) must
  // return the live list (a range of const Node*) of particle s < particle_count. The lists are
  // marked in parallel: a sweep touches every live cluster of every particle (scattered nodes,
  // a cache miss each), which on one thread was a fifth of a PriorPrior run at n = 2400 with 256
  // particles while the other threads waited. Marks are relaxed atomic stores of the sweep's
  // epoch, so particles sharing a cluster may mark it at the same time.
  template <typename LiveOf>
  void collect_if_due(std::size_t clusters_per_step, std::size_t particle_count,
                      const LiveOf& live_of) {
    if (!over_budget(clusters_per_step) && merged_.size() < 2 * kept_ + clusters_per_step) return;
    sweep(particle_count, live_of);
    if (over_budget(clusters_per_step)) {
      spare_.clear();
      if (over_budget(clusters_per_step)) {
        throw ResourceError(
            "SMC: the particles' clusters would need more than the memory left to them by the "
            "budget (--max-memory), " +
            format_bytes(static_cast<double>(budget_)) + ", with " +
            std::to_string(merged_.size()) +
            " clusters still listed; give it more memory, or let the particles resample more "
            "often, which shares clusters between them (a higher --ess-threshold), or run "
            "fewer --particles");
      }
    }
  }

 private:
  // Whether the clusters held, and a step's new ones, could pass the cap.
  bool over_budget(std::size_t clusters_per_step) const {
    if (budget_ == 0) return false;
    const double held = static_cast<double>(merged_.size() + spare_.size() + clusters_per_step);
    return held * static_cast<double>(node_bytes_) > static_cast<double>(budget_);
  }

  template <typename LiveOf>
  void sweep(std::size_t particle_count, const LiveOf& live_of) {
    const std::uint64_t epoch = ++epoch_;
    // Lists may differ in length (PriorPrior's shared bases and short patch lists): their mean.
    std::size_t listed = 0;
    for (std::size_t s = 0; s < particle_count; ++s) listed += std::size(live_of(s));
    const std::size_t per_list = particle_count > 0 ? listed / particle_count : 0;
    // A mark is a load, and a store at most once per cluster and sweep: one unit per entry.
    // (Four split the sweeps of 64 particles at n = 2 000 in a binary PriorPrior run, which
    // split nothing else: the worker then spun after each, 2 threads cost 20 % more CPU time
    // than 1, and the wall time did not fall. bench/RESULTS.md, Engine: SMC, twenty-seventh
    // session.)
    parallel_for_work(0, particle_count, per_list + 1, [&](const auto& range) {
      for (std::size_t s = range.begin(); s != range.end(); ++s) {
        for (const Node* node : live_of(s)) {
          if (in_block(node)) continue;
          // Clusters shared by many particles (the leaves above all) are written once, not by
          // every thread in turn: a store to a line another core reads moves the line.
          std::atomic_ref<std::uint64_t> mark(node->collect_mark);
          if (mark.load(std::memory_order_relaxed) != epoch)
            mark.store(epoch, std::memory_order_relaxed);
        }
      }
    });
    const auto unlisted = std::partition(
        merged_.begin(), merged_.end(),
        [epoch](const std::unique_ptr<Node>& node) { return node->collect_mark == epoch; });
    if (reuse_) std::move(unlisted, merged_.end(), std::back_inserter(spare_));
    merged_.erase(unlisted, merged_.end());
    kept_ = merged_.size();
  }

 public:
  // Clusters in use (kept or made since the last sweep); spares are not counted.
  std::size_t size() const { return block_size_ + merged_.size(); }
  std::size_t spare_count() const { return spare_.size(); }

 private:
  bool in_block(const Node* node) const {
    // By integer addresses: ordering pointers into different arrays with < is unspecified.
    const auto address = reinterpret_cast<std::uintptr_t>(node);
    const auto begin = reinterpret_cast<std::uintptr_t>(block_.get());
    return address - begin < block_size_ * sizeof(Node);
  }

  bool reuse_;
  std::vector<std::unique_ptr<Node>> merged_, spare_;
  std::unique_ptr<Node[]> block_;  // keep_block's
  std::size_t block_size_ = 0;
  std::size_t kept_ = 0;  // merged clusters kept by the last sweep
  std::uint64_t epoch_ = 0;
  std::size_t node_bytes_ = 0, budget_ = 0;  // limit()'s
};

}  // namespace kingman::detail
