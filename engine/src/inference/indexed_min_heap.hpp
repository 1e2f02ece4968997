#pragma once
// A binary min-heap over item ids 0..capacity-1 with keys that can be changed in place
// (Mueller's generic linkage keeps one entry per cluster, keyed by its best pair's score).
// Equal keys go to the smaller id, so the order of extraction never depends on history.
#include <cstddef>
#include <limits>
#include <vector>

namespace kingman::detail {

class IndexedMinHeap {
 public:
  explicit IndexedMinHeap(std::size_t capacity)
      : key_(capacity, 0.0), position_(capacity, kAbsent) {
    heap_.reserve(capacity);
  }

  bool empty() const { return heap_.empty(); }
  bool contains(std::size_t id) const { return position_[id] != kAbsent; }
  std::size_t top() const { return heap_.front(); }
  double key(std::size_t id) const { return key_[id]; }

  // Inserts id or changes its key.
  void set(std::size_t id, double key) {
    if (!contains(id)) {
      key_[id] = key;
      position_[id] = heap_.size();
      heap_.push_back(id);
      sift_up(position_[id]);
      return;
    }
    const double old = key_[id];
    key_[id] = key;
    if (before(key, id, old, id)) {
      sift_up(position_[id]);
    } else {
      sift_down(position_[id]);
    }
  }

  void remove(std::size_t id) {
    if (!contains(id)) return;
    const std::size_t at = position_[id];
    const std::size_t last = heap_.back();
    heap_.pop_back();
    position_[id] = kAbsent;
    if (last == id) return;
    heap_[at] = last;
    position_[last] = at;
    sift_up(at);
    sift_down(position_[last]);
  }

 private:
  static constexpr std::size_t kAbsent = std::numeric_limits<std::size_t>::max();

  static bool before(double ka, std::size_t a, double kb, std::size_t b) {
    return ka < kb || (ka == kb && a < b);
  }
  bool before(std::size_t i, std::size_t j) const {
    return before(key_[heap_[i]], heap_[i], key_[heap_[j]], heap_[j]);
  }
  void swap_at(std::size_t i, std::size_t j) {
    std::swap(heap_[i], heap_[j]);
    position_[heap_[i]] = i;
    position_[heap_[j]] = j;
  }
  void sift_up(std::size_t i) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!before(i, parent)) break;
      swap_at(i, parent);
      i = parent;
    }
  }
  void sift_down(std::size_t i) {
    for (;;) {
      const std::size_t left = 2 * i + 1;
      if (left >= heap_.size()) break;
      std::size_t best = left;
      if (left + 1 < heap_.size() && before(left + 1, left)) best = left + 1;
      if (!before(best, i)) break;
      swap_at(i, best);
      i = best;
    }
  }

  std::vector<double> key_;
  std::vector<std::size_t> position_;
  std::vector<std::size_t> heap_;
};

}  // namespace kingman::detail
