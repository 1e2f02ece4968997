#pragma once
// Particles grouped by state: resampled copies of one state (same history pointer) share the
// work that depends on the state alone. Groups are numbered by their first particle, and each
// group lists its particles in particle order, so the grouping is a function of the particle
// order and never of addresses or of the thread count.
//
// Built once per SMC step from reused buffers: after the first steps it allocates nothing (a
// hash map here cost one allocation per particle and step).
#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace kingman::detail {

class StateGroups {
 public:
  // Groups the particles whose states are keyed by `keys` (equal keys: one state).
  template <typename Key>
  void assign(std::span<const Key* const> keys) {
    const std::size_t count = keys.size();
    // Sorting (key, particle) pairs puts each group's particles together, in particle order.
    order_.resize(count);
    for (std::size_t s = 0; s < count; ++s) order_[s] = {keys[s], s};
    std::sort(order_.begin(), order_.end(), [](const auto& a, const auto& b) {
      if (a.first != b.first) return std::less<const void*>()(a.first, b.first);
      return a.second < b.second;
    });
    // Runs of equal keys, named by their first (smallest) particle; runs sorted by that
    // particle get the group numbers.
    runs_.clear();
    for (std::size_t k = 0; k < count; ++k)
      if (k == 0 || order_[k].first != order_[k - 1].first) runs_.push_back({order_[k].second, k});
    std::sort(runs_.begin(), runs_.end());
    group_of_.resize(count);
    members_.resize(count);
    leader_.resize(runs_.size());
    member_begin_.resize(runs_.size() + 1);
    std::size_t at = 0;
    for (std::size_t g = 0; g < runs_.size(); ++g) {
      const auto [leader, start] = runs_[g];
      leader_[g] = leader;
      member_begin_[g] = at;
      for (std::size_t k = start; k < count && order_[k].first == order_[start].first; ++k) {
        group_of_[order_[k].second] = g;
        members_[at++] = order_[k].second;
      }
    }
    member_begin_[runs_.size()] = at;
  }

  std::size_t size() const { return leader_.size(); }
  // The group of particle s, the first particle of group g, and group g's particles as
  // members()[member_begin(g)], ..., members()[member_begin(g + 1) - 1] (groups in order).
  std::size_t group_of(std::size_t s) const { return group_of_[s]; }
  std::size_t leader(std::size_t g) const { return leader_[g]; }
  std::size_t member_begin(std::size_t g) const { return member_begin_[g]; }
  const std::vector<std::size_t>& members() const { return members_; }

 private:
  std::vector<std::pair<const void*, std::size_t>> order_;
  std::vector<std::pair<std::size_t, std::size_t>> runs_;  // (first particle, start in order_)
  std::vector<std::size_t> group_of_, leader_, member_begin_, members_;
};

}  // namespace kingman::detail
