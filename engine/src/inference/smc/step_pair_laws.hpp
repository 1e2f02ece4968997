#pragma once
// PostPost's pair laws shared by the states of one step, for the models whose pair masses come
// from an adaptive duration law (law_proposal_system.hpp: Brownian data with missing entries,
// the binary / multinomial model with per-column rates).
//
// A pair's density in a state of current time T is f_T(delta) = e^{-lambda delta} Z_C(T -
// delta), and Z_C depends on the merge time T - delta and the two clusters only. So for a state
// of time T = T_max - Delta (Delta >= 0),
//   G_C(T) = integral_0^inf e^{-lambda delta} Z_C(T - delta) d delta
//          = e^{lambda Delta} integral_Delta^inf f_{T_max}(delta) d delta,
// the upper mass of the law built at T_max (AdaptiveDurationLaw::log_upper, accurate relative
// to itself also far in the tail). Resampling leaves a step's states mostly the same clusters:
// PostPost on 100 x 10 with 10 % of entries missing and 32 particles built 2.04 M laws for
// 0.64 M distinct pairs of clusters (and, sharing them, 0.64 M laws). So before the step's tasks,
// every pair of clusters that two or more states list together gets one law, built at the latest of
// those states' times in a parallel loop (each law written by one task), and the states read their
// masses off it: an upper mass costs one panel of the quadrature, a law ~15. The states compute the
// others (closed forms, or pairs that one state lists) themselves, as before. Laws and masses are
// pure functions of the pair, lambda and the states' times, so neither the sharing nor the thread
// count changes a value.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "../../scheduler/parallel_for.hpp"

namespace kingman::detail {

// A law's memory, roughly (its panels and their running sums), for the tables' budget.
inline constexpr std::size_t kStepLawBytes = 2048;

template <class Model>
class StepPairLaws {
 public:
  using Node = typename Model::Node;
  using Law = typename Model::Law;

  static constexpr std::size_t kLawBytes = kStepLawBytes;
  static constexpr std::uint32_t kNoIndex = UINT32_MAX;

  // Slot and law memory beyond which a step does without sharing (SmcOptions::step_table_bytes).
  explicit StepPairLaws(std::size_t largest_table_bytes)
      : largest_table_bytes_(largest_table_bytes) {}

  // The model (law_proposal_system.hpp) supplies, besides Node, Law and Scratch:
  //   needs_law(scratch, a, b, time): whether the pair's mass at `time` comes from a law (and
  //     not from a closed form, which the states compute themselves at their own times);
  //   build_law(scratch, a, b, lambda, time, law).
  // On the calling thread, before the step's tasks: `states` are the step's distinct states
  // (one per group, in group order; each with `live` and `time`). Indexes the clusters that two
  // or more of them list, finds the pairs of those that two or more list together and the
  // latest of their times, and builds those pairs' laws (where the model has no closed form) in
  // a parallel loop. False, with nothing shared, when fewer than two states are given or the
  // tables would exceed the largest table's bytes.
  // With `needed` (by state, by pair in the order x < y), only the pairs it marks count: a pair
  // is shared where two or more states need its mass.
  template <class State>
  bool prepare(const Model& model, std::span<const State* const> states, double lambda,
               const std::vector<std::vector<std::uint8_t>>* needed = nullptr) {
    enabled_ = false;
    if (states.size() < 2) return false;
    lambda_ = lambda;
    // The clusters listed by two or more states, by address (the order only lays out tables).
    listed_.clear();
    for (const State* state : states)
      listed_.insert(listed_.end(), state->live.begin(), state->live.end());
    std::sort(listed_.begin(), listed_.end(), std::less<>());
    indexed_.clear();
    for (std::size_t i = 0; i < listed_.size();) {
      std::size_t j = i + 1;
      while (j < listed_.size() && listed_[j] == listed_[i]) ++j;
      if (j - i >= 2) indexed_.push_back(listed_[i]);
      i = j;
    }
    const std::size_t count = indexed_.size();
    const std::size_t slots = count * (count > 0 ? count - 1 : 0) / 2;
    if (slots * sizeof(Slot) > largest_table_bytes_) return false;
    slots_.assign(slots, Slot{});
    // Each state's clusters by index, and the pairs' latest times and counts.
    positions_.resize(states.size());
    for (std::size_t g = 0; g < states.size(); ++g) {
      const auto& live = states[g]->live;
      std::vector<std::uint32_t>& index = positions_[g];
      index.resize(live.size());
      for (std::size_t x = 0; x < live.size(); ++x) {
        const auto it = std::lower_bound(indexed_.begin(), indexed_.end(), live[x], std::less<>());
        index[x] = it != indexed_.end() && *it == live[x]
                       ? static_cast<std::uint32_t>(it - indexed_.begin())
                       : kNoIndex;
      }
      const double time = states[g]->time;
      const std::uint8_t* need = needed ? (*needed)[g].data() : nullptr;
      for (std::size_t x = 0, i = 0; x < live.size(); ++x) {
        if (index[x] == kNoIndex) {
          i += live.size() - 1 - x;
          continue;
        }
        for (std::size_t y = x + 1; y < live.size(); ++y, ++i) {
          if (index[y] == kNoIndex || (need && !need[i])) continue;
          Slot& slot = slots_[slot_of(index[x], index[y])];
          slot.latest = std::max(slot.latest, time);
          slot.earliest = std::min(slot.earliest, time);
          ++slot.states;
        }
      }
    }
    // The shared pairs, in slot order, each with its law.
    shared_.clear();
    for (std::uint32_t i = 1; i < count; ++i)
      for (std::uint32_t j = 0; j < i; ++j)
        if (slots_[slot_of(i, j)].states >= 2) shared_.push_back({i, j});
    if (shared_.size() * kLawBytes + slots * sizeof(Slot) > largest_table_bytes_) return false;
    if (laws_.size() < shared_.size()) laws_.resize(shared_.size());
    parallel_for_work(0, shared_.size(), kLawWork, [&](const auto& range) {
      typename Model::Scratch scratch;
      for (std::size_t k = range.begin(); k != range.end(); ++k) {
        const auto [i, j] = shared_[k];
        Slot& slot = slots_[slot_of(i, j)];
        slot.law = kNoIndex;
        if (!model.needs_law(scratch, *indexed_[i], *indexed_[j], slot.latest)) continue;
        model.build_law(scratch, *indexed_[i], *indexed_[j], lambda_, slot.latest, laws_[k]);
        // The earliest state's upper mass is the smallest asked of the law: read off panels
        // refined for it rather than integrated afresh in each state's task.
        laws_[k].resolve_upper(slot.latest - slot.earliest);
        slot.law = static_cast<std::uint32_t>(k);
      }
    });
    enabled_ = true;
    return true;
  }

  // log G_C of the clusters at live positions x and y of the state of group g (prepare's
  // order) at its time `time`, into `log_mass`, where the pair has a shared law; false where it
  // has none (the caller computes the mass itself).
  bool log_mass(std::size_t g, std::size_t x, std::size_t y, double time, double& log_mass) const {
    if (!enabled_) return false;
    const std::uint32_t i = positions_[g][x], j = positions_[g][y];
    if (i == kNoIndex || j == kNoIndex) return false;
    const Slot& slot = slots_[slot_of(i, j)];
    if (slot.law == kNoIndex) return false;
    // The state's time is at most the latest by construction; Delta = 0 gives the law's mass.
    const double delta = slot.latest - time;
    log_mass = delta > 0.0 ? lambda_ * delta + laws_[slot.law].log_upper(delta)
                           : laws_[slot.law].log_mass();
    return true;
  }

  // Laws shared this step (for tests and cost reports).
  std::size_t shared_laws() const {
    if (!enabled_) return 0;
    std::size_t built = 0;
    for (const auto& [i, j] : shared_) built += slots_[slot_of(i, j)].law != kNoIndex;
    return built;
  }

 private:
  struct Slot {
    double latest = -std::numeric_limits<double>::infinity();   // latest time of the states
    double earliest = std::numeric_limits<double>::infinity();  // and earliest
    std::uint32_t states = 0;                                   // states listing the pair
    std::uint32_t law = kNoIndex;                               // its law in laws_, if built
  };
  // A law's cost in parallel_for_work's units: a few hundred density evaluations.
  static constexpr std::size_t kLawWork = 20000;

  static std::size_t slot_of(std::uint32_t i, std::uint32_t j) {
    if (i < j) std::swap(i, j);
    return std::size_t{i} * (i - 1) / 2 + j;
  }

  bool enabled_ = false;
  double lambda_ = 1.0;
  std::vector<const Node*> listed_, indexed_;
  std::size_t largest_table_bytes_;
  std::vector<Slot> slots_;
  std::vector<std::vector<std::uint32_t>> positions_;  // by group: live position -> index
  std::vector<std::pair<std::uint32_t, std::uint32_t>> shared_;
  std::vector<Law> laws_;  // by shared pair (reused across steps: no allocation once warm)
};

}  // namespace kingman::detail
