#pragma once
// Storage for the O(n^2) pair tables: a condensed matrix of n (n - 1) / 2 numbers is 400 MB at
// n = 10 000. Two things set it apart from std::vector:
//
// - Its entries start uninitialized, for loops that write every one of them. A vector's
//   zeroing wrote the whole table on the calling thread before the parallel loop that fills
//   it, and took every page's first touch there.
// - A large block is aligned to 2 MiB and advised onto 2 MiB pages (Linux transparent huge
//   pages, which a system in `madvise` mode gives only to memory advised so). Every first touch
//   of a 4 KiB page is a page fault: ~1.2 us on the 2-vCPU guest that the benches run on, and
//   Greedy-Rate1 at n = 10 000 took 101 000 of them, 0.24 s of system time in a 1.5 s run
//   (bench/RESULTS.md, Engine: greedy, thirty-second session). A 2 MiB page is one fault and
//   one zeroing, 4 MiB in 0.14-0.36 ms against 1.2-1.5 ms in small pages; freeing it costs a
//   tenth as much.
//
// The block comes from the global (aligned) operator new, so it counts wherever the program
// counts its heap (tests/memory, a replaced allocator), and the advice is only advice: where
// the kernel has no huge pages to give, the table lies on small pages as before.
#include <cstddef>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

namespace kingman::detail {

// The page size that large blocks are aligned to and advised onto.
inline constexpr std::size_t kHugePageBytes = std::size_t{1} << 21;

// `bytes` of uninitialized storage (aligned to 16 bytes; to kHugePageBytes, and advised onto
// huge pages, from kHugePageBytes on), released by release_large with the same size. Throws
// std::bad_alloc.
void* allocate_large(std::size_t bytes);
void release_large(void* block, std::size_t bytes) noexcept;

// Whether a block of `bytes` from allocate_large is aligned to kHugePageBytes and advised onto
// huge pages (advice the kernel may not follow).
constexpr bool advised_onto_huge_pages(std::size_t bytes) {
  return bytes >= kHugePageBytes;
}

// The heap that a block of `bytes` from allocate_large may take, for memory budgets: a large
// block's alignment can take up to a huge page before it, and the rounding of its end (by the
// allocator, or to the page that the kernel backs it with) up to one after it.
constexpr double large_block_footprint(double bytes) {
  return bytes >= static_cast<double>(kHugePageBytes)
             ? bytes + 2.0 * static_cast<double>(kHugePageBytes)
             : bytes;
}

// A fixed-size array of `size` uninitialized T (trivial types only: nothing is constructed or
// destroyed), move-only.
template <typename T>
class LargeArray {
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>,
                "LargeArray holds trivial types only: it never constructs or destroys them");
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);

 public:
  LargeArray() = default;
  explicit LargeArray(std::size_t size) : size_(size) {
    if (size > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    if (size > 0) data_ = static_cast<T*>(allocate_large(size * sizeof(T)));
  }
  ~LargeArray() { release_large(data_, size_ * sizeof(T)); }
  LargeArray(LargeArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  LargeArray& operator=(LargeArray&& other) noexcept {
    LargeArray(std::move(other)).swap(*this);
    return *this;
  }
  LargeArray(const LargeArray&) = delete;
  LargeArray& operator=(const LargeArray&) = delete;

  void swap(LargeArray& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  operator std::span<T>() { return {data_, size_}; }
  operator std::span<const T>() const { return {data_, size_}; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace kingman::detail
