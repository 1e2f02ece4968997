#pragma once
// Owner of a particle system's merge histories (HistoryNode, particle_state.hpp). A particle's
// history is a plain pointer to its last merge, each node pointing to the one before, so
// resampled copies share their common past and copying a particle copies one pointer.
//
// With std::shared_ptr nodes every step made one allocation per particle (6 633 of an MPost2
// run's 12 330 at n = 64 with 100 particles), and every particle's new node incremented the
// count of a parent that the copies of its state share: on 2 threads a quarter of the draw's
// time sat on that one atomic add, the cache line moving between the cores
// (bench/RESULTS.md, eighteenth and nineteenth sessions).
//
// Here a step's nodes are handed out before the step's parallel loop, one per particle, from
// blocks of nodes, and the nodes no current history reaches are found by mark and sweep: run
// when the pool has handed out as many nodes since its last sweep as that sweep kept, plus one
// step's worth. So it holds about twice the nodes the histories reach, plus a step's, and a
// sweep's work, O(nodes held), is spread over at least as many steps' worth of new nodes.
// Nothing here depends on the thread count, and addresses never decide a value.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "particle_state.hpp"

namespace kingman::detail {

class HistoryPool {
 public:
  // Hands out one node per particle s < count for the merge it makes this step (node(s)).
  // history_of(s) must return particle s's current history (a const HistoryNode*, possibly
  // null): those are the histories a sweep keeps, with everything they reach. Nodes handed out
  // by earlier calls and not reached from them may be handed out again. Call it before the
  // step's parallel loop: it is not thread-safe.
  template <typename HistoryOf>
  void start_step(std::size_t count, const HistoryOf& history_of) {
    if (handed_out_ >= kept_ + count) sweep(count, history_of);
    if (free_.size() < count)
      add_block(std::max({count - free_.size(), held_ / 2, kSmallestBlock}));
    step_nodes_.assign(free_.end() - static_cast<std::ptrdiff_t>(count), free_.end());
    free_.resize(free_.size() - count);
    handed_out_ += count;
  }

  // Particle s's node for this step's merge (start_step's count > s). Each particle's node is
  // its own, so particles may record their merges on different threads.
  HistoryNode& node(std::size_t s) const { return *step_nodes_[s]; }

  // Nodes held, in use or free; the nodes the last sweep kept.
  std::size_t held() const { return held_; }
  std::size_t kept() const { return kept_; }

 private:
  static constexpr std::size_t kSmallestBlock = 256;
  // A free node's mark: no sweep epoch reaches it.
  static constexpr std::uint64_t kFree = ~std::uint64_t{0};

  void add_block(std::size_t size) {
    blocks_.push_back(std::make_unique<HistoryNode[]>(size));
    block_sizes_.push_back(size);
    HistoryNode* block = blocks_.back().get();
    // Handed out from the back: the block's first nodes first.
    for (std::size_t k = size; k-- > 0;) {
      block[k].collect_mark = kFree;
      free_.push_back(block + k);
    }
    held_ += size;
  }

  // Marks what the histories reach (a history's walk stops at the first node marked already,
  // so shared pasts are walked once), then lists every node left unmarked as free.
  template <typename HistoryOf>
  void sweep(std::size_t count, const HistoryOf& history_of) {
    const std::uint64_t epoch = ++epoch_;
    if (epoch == kFree) throw std::logic_error("HistoryPool: sweep epochs exhausted");
    kept_ = 0;
    for (std::size_t s = 0; s < count; ++s) {
      for (const HistoryNode* h = history_of(s); h && h->collect_mark != epoch; h = h->previous) {
        h->collect_mark = epoch;
        ++kept_;
      }
    }
    free_.clear();
    for (std::size_t b = blocks_.size(); b-- > 0;) {
      HistoryNode* block = blocks_[b].get();
      for (std::size_t k = block_sizes_[b]; k-- > 0;) {
        if (block[k].collect_mark != epoch) {
          block[k].collect_mark = kFree;
          free_.push_back(block + k);
        }
      }
    }
    handed_out_ = 0;
  }

  std::vector<std::unique_ptr<HistoryNode[]>> blocks_;
  std::vector<std::size_t> block_sizes_;
  std::vector<HistoryNode*> free_;        // to hand out from the back
  std::vector<HistoryNode*> step_nodes_;  // by particle, this step's
  std::size_t held_ = 0;                  // nodes in all blocks
  std::size_t kept_ = 0;                  // nodes the last sweep kept
  std::size_t handed_out_ = 0;            // since the last sweep
  std::uint64_t epoch_ = 0;
};

}  // namespace kingman::detail
