#include "kingman/kernels/rng.hpp"

#include <numbers>

namespace kingman::kernels {
namespace {

constexpr std::uint32_t kMul0 = 0xD2511F53u;
constexpr std::uint32_t kMul1 = 0xCD9E8D57u;
constexpr std::uint32_t kWeyl0 = 0x9E3779B9u;
constexpr std::uint32_t kWeyl1 = 0xBB67AE85u;

inline void mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
  const std::uint64_t product = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(product >> 32);
  lo = static_cast<std::uint32_t>(product);
}

inline std::array<std::uint32_t, 2> split(std::uint64_t x) {
  return {static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(x >> 32)};
}

// A 64-bit key derived from (seed, coordinate) by one Philox block keyed by the seed: distinct
// coordinates give independent-looking keys, so streams never share counters.
inline std::array<std::uint32_t, 2> derive_key(std::uint64_t seed, std::uint64_t coordinate,
                                               std::uint32_t domain) {
  const auto c = split(coordinate);
  const auto block = philox4x32({c[0], c[1], domain, 0x6B696E67u}, split(seed));
  return {block[0], block[1]};
}

}  // namespace

std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> ctr,
                                        std::array<std::uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    std::uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kMul0, ctr[0], hi0, lo0);
    mulhilo(kMul1, ctr[2], hi1, lo1);
    ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0};
    key[0] += kWeyl0;
    key[1] += kWeyl1;
  }
  return ctr;
}

RandomStream::Key RandomStream::key(std::uint64_t seed, std::uint64_t b) noexcept {
  return derive_key(seed, b, 1u);
}

std::uint64_t RandomStream::next_u64() noexcept {
  if (used_ > 2) {
    // Counter = (index, a) in 128 bits; key derived from (seed, b).
    if (!has_key_) {
      key_ = derive_key(seed_, b_, 1u);
      has_key_ = true;
    }
    const auto idx = split(index_++);
    const auto a = split(a_);
    block_ = philox4x32({idx[0], idx[1], a[0], a[1]}, key_);
    used_ = 0;
  }
  const std::uint64_t value = (static_cast<std::uint64_t>(block_[used_]) << 32) | block_[used_ + 1];
  used_ += 2;
  return value;
}

double RandomStream::normal() noexcept {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  const double radius = std::sqrt(-2.0 * std::log(uniform()));
  const double angle = 2.0 * std::numbers::pi * uniform();
  spare_normal_ = radius * std::sin(angle);
  has_spare_normal_ = true;
  return radius * std::cos(angle);
}

std::uint64_t RandomStream::below(std::uint64_t n) noexcept {
  // Lemire-style rejection on the top bits keeps the result unbiased.
  const std::uint64_t limit = (~std::uint64_t{0}) - (~std::uint64_t{0}) % n;
  std::uint64_t x;
  do {
    x = next_u64();
  } while (x >= limit);
  return x % n;
}

double keyed_uniform(std::uint64_t seed, std::uint64_t a, std::uint64_t b,
                     std::uint64_t c) noexcept {
  const auto ca = split(a);
  const auto cb = split(b);
  const auto block = philox4x32({ca[0], ca[1], cb[0], cb[1]}, derive_key(seed, c, 2u));
  const std::uint64_t bits = (static_cast<std::uint64_t>(block[0]) << 32) | block[1];
  return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53;
}

}  // namespace kingman::kernels
