#pragma once
// PostPost's and MPost1's pair kernels, shared by the states of one step. A pair's score needs
// the GIG kernel (p, eps_C, lambda): p and lambda are the step's, and eps_C belongs to the two
// clusters, so the kernel's expensive parts (its mode, and the Bessel normalizer that covers
// pairs whose r_C lies far below the mode: kernels::GigUpperTail::Core) are the same in every
// state that lists both clusters; only r_C, through the state's time, differs. Resampling
// leaves the states of a step mostly the same clusters: PostPost at n = 128 with 32 particles
// scores 9.39 M pairs, of which 8.54 M take their kernel from the table (0.71 M kernels
// computed for it) and 0.86 M compute their own.
//
// So before the step's tasks, the kernels of the pairs of clusters that at least two states
// list are computed once, in a parallel loop in which each is written by one task; the tasks that
// score pairs only read them, and compute the kernels of other pairs themselves. (Computed lazily
// by the scoring tasks instead, behind a claim flag per pair, the threads met on the same pairs at
// the same time, since states list their pairs in the same order, and MPost1 at n = 128 cost 27 %
// more CPU on 2 threads than on 1.) Either way a kernel is a pure function of p, eps_C and lambda,
// so neither the sharing, nor the order of the tasks, nor the thread count changes a score.
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "kingman/kernels/gig.hpp"
#include "pair_cache.hpp"
#include "particle_state.hpp"

namespace kingman::detail {

class StepPairTails {
 public:
  // Table memory beyond which a step does without it: SmcOptions::step_table_bytes, by default
  // 64 MiB (about 2400 shared clusters).
  explicit StepPairTails(std::size_t largest_table_bytes)
      : largest_table_bytes_(largest_table_bytes) {}
  static constexpr std::size_t kBytesPerPair = sizeof(kernels::GigUpperTail::Core);
  static constexpr std::uint32_t kNoIndex = UINT32_MAX;

  // On one thread, before the step's tasks: indexes the clusters that at least two of `states`
  // (each distinct state once) list, then computes the kernels with shape p and rate lambda of
  // every pair of them in a parallel loop. chi of a pair is its squared distance from `cache`,
  // raised to the smallest normal number where `floor_chi` (MPost1). False, with nothing indexed,
  // when the table would exceed the largest table's bytes.
  bool prepare(std::span<const ParticleState* const> states, double p, double lambda,
               const LeafPairCache& cache, bool floor_chi);

  // The cluster's index this step, or kNoIndex (not shared, or not prepared).
  std::uint32_t index_of(const ClusterNode& c) const {
    return enabled_ && c.tails_stamp == indexed_stamp_ ? c.tails_index : kNoIndex;
  }

  // The kernel (p, chi, lambda) of the pair of indexed clusters i != j, chi being the pair's.
  kernels::GigUpperTail tail(std::uint32_t i, std::uint32_t j, double chi) const {
    if (i < j) std::swap(i, j);
    return {p_, chi, lambda_, cores_[std::size_t{i} * (i - 1) / 2 + j]};
  }

 private:
  std::size_t largest_table_bytes_;
  std::uint64_t generation_ = 0;
  std::uint64_t indexed_stamp_ = 0;  // ClusterNode::tails_stamp of this step's indexed clusters
  bool enabled_ = false;
  double p_ = 0.0, lambda_ = 1.0;
  std::vector<const ClusterNode*> indexed_;         // by index
  std::vector<kernels::GigUpperTail::Core> cores_;  // by pair, i (i - 1) / 2 + j for j < i
};

}  // namespace kingman::detail
