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
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <vector>

namespace kingman::detail {

// Node has a member `mutable std::uint64_t collect_mark`, which only the pool uses.
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

  // A cluster freed by an earlier sweep, or null when none is left (always null without reuse).
  // Its fields hold stale values for the caller to overwrite. Not thread-safe: take spares
  // before a parallel loop.
  std::unique_ptr<Node> take_spare() {
    if (spare_.empty()) return nullptr;
    std::unique_ptr<Node> node = std::move(spare_.back());
    spare_.pop_back();
    return node;
  }

  // A cluster kept for the whole run (the leaves).
  const Node* keep(std::unique_ptr<Node> node) {
    permanent_.push_back(std::move(node));
    return permanent_.back().get();
  }

  // A cluster made by a step. Not thread-safe: call after the step's parallel loop.
  const Node* adopt(std::unique_ptr<Node> node) {
    merged_.push_back(std::move(node));
    return merged_.back().get();
  }

  // Frees the step-made clusters that no particle lists, if a sweep is due. for_each_live(visit)
  // must call visit(const Node*) for every cluster in every particle's live list.
  template <typename ForEachLive>
  void collect_if_due(std::size_t clusters_per_step, const ForEachLive& for_each_live) {
    if (merged_.size() < 2 * kept_ + clusters_per_step) return;
    const std::uint64_t epoch = ++epoch_;
    for_each_live([epoch](const Node* node) { node->collect_mark = epoch; });
    const auto unlisted = std::partition(
        merged_.begin(), merged_.end(),
        [epoch](const std::unique_ptr<Node>& node) { return node->collect_mark == epoch; });
    if (reuse_) std::move(unlisted, merged_.end(), std::back_inserter(spare_));
    merged_.erase(unlisted, merged_.end());
    kept_ = merged_.size();
  }

  // Clusters in use (kept or made since the last sweep); spares are not counted.
  std::size_t size() const { return permanent_.size() + merged_.size(); }
  std::size_t spare_count() const { return spare_.size(); }

 private:
  bool reuse_;
  std::vector<std::unique_ptr<Node>> permanent_, merged_, spare_;
  std::size_t kept_ = 0;  // merged clusters kept by the last sweep
  std::uint64_t epoch_ = 0;
};

}  // namespace kingman::detail
