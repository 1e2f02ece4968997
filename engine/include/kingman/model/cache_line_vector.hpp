#pragma once
// CacheLineVector<T>: a std::vector whose buffer starts on a cache line and fills whole lines,
// for scratch that a thread writes in its hot loop. Such a buffer then shares no line with its
// neighbours in the heap, which other threads may be reading. With a plain vector, the main
// thread's binary pair overlaps (DiscretePair) once lay right after the data's mutation rates, so
// the other thread's every read of those rates moved the line: a binary PriorPost run then cost
// 8-15 % more CPU time on 2 threads than on 1, and 1-4 % in these buffers (bench/RESULTS.md,
// Engine: SMC, twenty-ninth session). Where the heap puts things is luck, so the buffers that a
// thread rewrites for every pair take whole lines.
#include <cstddef>
#include <limits>
#include <new>
#include <vector>

namespace kingman {

inline constexpr std::size_t kCacheLineBytes = 64;

template <typename T>
struct CacheLineAllocator {
  using value_type = T;

  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}

  T* allocate(std::size_t count) {
    if (count > (std::numeric_limits<std::size_t>::max() - kCacheLineBytes) / sizeof(T))
      throw std::bad_array_new_length();
    const std::size_t bytes =
        (count * sizeof(T) + kCacheLineBytes - 1) / kCacheLineBytes * kCacheLineBytes;
    return static_cast<T*>(::operator new (bytes, std::align_val_t{kCacheLineBytes}));
  }
  void deallocate(T* pointer, std::size_t) noexcept {
    ::operator delete (pointer, std::align_val_t{kCacheLineBytes});
  }

  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept {
    return true;
  }
};

template <typename T>
using CacheLineVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace kingman
