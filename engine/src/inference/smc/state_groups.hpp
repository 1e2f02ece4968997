#pragma once
// Particles grouped by state: resampled copies of one state (same history pointer) share the
// work that depends on the state alone. Groups are numbered by their first particle, and each
// group lists its particles in particle order, so the grouping is a function of the particle
// order and never of addresses or of the thread count.
//
// Built once per SMC step from reused buffers: after the first steps it allocates nothing (a
// hash map here cost one allocation per particle and step).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kingman::detail {

class StateGroups {
 public:
  // Groups the particles whose states are keyed by `keys` (equal keys: one state; a null key
  // is a key like any other). One pass in particle order with an open-addressing table of the
  // keys seen so far gives each particle its group, numbered by first appearance, and a counting
  // pass lists the members (sorting the (key, particle) pairs did the same in O(N log N): 2.5 %
  // of an MPost2 run at n = 64 with 100 particles).
  template <typename Key>
  void assign(std::span<const Key* const> keys) {
    const std::size_t count = keys.size();
    std::size_t slots = 16;
    while (slots < 2 * count) slots *= 2;
    slot_group_.assign(slots, kEmpty);
    slot_key_.resize(slots);
    group_of_.resize(count);
    leader_.clear();
    for (std::size_t s = 0; s < count; ++s) {
      const void* key = keys[s];
      std::size_t slot = slot_of(key, slots);
      while (slot_group_[slot] != kEmpty && slot_key_[slot] != key) slot = (slot + 1) & (slots - 1);
      if (slot_group_[slot] == kEmpty) {
        slot_group_[slot] = leader_.size();
        slot_key_[slot] = key;
        leader_.push_back(s);
      }
      group_of_[s] = slot_group_[slot];
    }
    // Members by group, each group's in particle order.
    member_begin_.assign(leader_.size() + 1, 0);
    for (std::size_t s = 0; s < count; ++s) ++member_begin_[group_of_[s] + 1];
    for (std::size_t g = 0; g < leader_.size(); ++g) member_begin_[g + 1] += member_begin_[g];
    next_.assign(member_begin_.begin(), member_begin_.end() - 1);
    members_.resize(count);
    for (std::size_t s = 0; s < count; ++s) members_[next_[group_of_[s]]++] = s;
  }

  std::size_t size() const { return leader_.size(); }
  // The group of particle s, the first particle of group g, and group g's particles as
  // members()[member_begin(g)], ..., members()[member_begin(g + 1) - 1] (groups in order).
  std::size_t group_of(std::size_t s) const { return group_of_[s]; }
  std::size_t leader(std::size_t g) const { return leader_[g]; }
  std::size_t member_begin(std::size_t g) const { return member_begin_[g]; }
  const std::vector<std::size_t>& members() const { return members_; }

 private:
  static constexpr std::size_t kEmpty = static_cast<std::size_t>(-1);

  // The table slot a key starts probing at (slots: a power of two): the address's bits above
  // the allocator's alignment, mixed by Fibonacci hashing.
  static std::size_t slot_of(const void* key, std::size_t slots) {
    const auto bits = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(key) >> 4);
    return static_cast<std::size_t>((bits * 0x9E3779B97F4A7C15ull) >> 32) & (slots - 1);
  }

  std::vector<std::size_t> slot_group_;  // group of the key in each slot, or kEmpty
  std::vector<const void*> slot_key_;
  std::vector<std::size_t> group_of_, leader_, member_begin_, members_, next_;
};

}  // namespace kingman::detail
