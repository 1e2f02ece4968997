#pragma once
// Counter-based random numbers (Philox4x32-10, Salmon et al. 2011). A stream is identified by a
// key (seed) and a counter prefix (e.g. particle, step, pair), so any draw can be recomputed
// from its coordinates, independently of thread count or of the order of other draws.
#include <array>
#include <cmath>
#include <cstdint>

namespace kingman::kernels {

// One Philox4x32-10 block: 128 random bits from a 128-bit counter and a 64-bit key.
std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> counter,
                                        std::array<std::uint32_t, 2> key);

// A sequential stream over Philox blocks: coordinates (a, b) fix the stream; draws advance
// an internal 64-bit index. Cheap to create; holds no heap memory.
class RandomStream {
 public:
  using Key = std::array<std::uint32_t, 2>;

  RandomStream(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) noexcept
      : seed_(seed), a_(a), b_(b) {}
  // The same stream, with its block key supplied: key(seed, b). Streams that differ only in a
  // share it, so a caller that makes one per particle and step derives it once per step (a
  // Philox block saved per stream: for PriorPrior, a third of its random-number cost).
  RandomStream(std::uint64_t seed, std::uint64_t a, std::uint64_t b, const Key& key) noexcept
      : seed_(seed), a_(a), b_(b), key_(key), has_key_(true) {}
  // The block key of the streams with coordinates (seed, b, any a).
  static Key key(std::uint64_t seed, std::uint64_t b) noexcept;

  // 64 uniformly random bits.
  std::uint64_t next_u64() noexcept;
  // Uniform on the open interval (0, 1): never 0 or 1, so logs are finite.
  double uniform() noexcept { return (static_cast<double>(next_u64() >> 11) + 0.5) * 0x1.0p-53; }
  // Standard normal (Box-Muller on two uniforms; the pair's second value is cached).
  double normal() noexcept;
  // Exponential with rate 1.
  double exponential() noexcept { return -std::log(uniform()); }
  // Uniform integer in [0, n), n > 0, without modulo bias.
  std::uint64_t below(std::uint64_t n) noexcept;

 private:
  std::uint64_t seed_, a_, b_;
  std::uint64_t index_ = 0;
  // The block key, derived from (seed, b) by one Philox block when the first block is drawn (or
  // supplied) and kept: deriving it again for every block doubled the cost of a draw.
  Key key_{};
  std::array<std::uint32_t, 4> block_{};
  int used_ = 4;  // 32-bit words of block_ already consumed
  bool has_key_ = false;
  bool has_spare_normal_ = false;
  double spare_normal_ = 0.0;
};

// A single uniform on (0,1) keyed by four coordinates, for draws that are recomputed instead
// of stored (e.g. the race's per-pair clocks).
double keyed_uniform(std::uint64_t seed, std::uint64_t a, std::uint64_t b,
                     std::uint64_t c) noexcept;

}  // namespace kingman::kernels
