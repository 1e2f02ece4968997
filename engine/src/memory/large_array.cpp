#include "large_array.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace kingman::detail {

void* allocate_large(std::size_t bytes) {
  if (!advised_onto_huge_pages(bytes)) return ::operator new(bytes);
  void* block = ::operator new (bytes, std::align_val_t{kHugePageBytes});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Fails (harmlessly) where the kernel has no transparent huge pages; the pages are then small.
  // glibc serves blocks this large by mmap, at the latest from 32 MiB; where its heap serves one,
  // the advice covers that stretch of the heap, which later small blocks may then share.
  ::madvise(block, bytes, MADV_HUGEPAGE);
#endif
  return block;
}

void release_large(void* block, std::size_t bytes) noexcept {
  if (!block) return;
  if (!advised_onto_huge_pages(bytes)) {
    ::operator delete(block);
    return;
  }
  ::operator delete (block, std::align_val_t{kHugePageBytes});
}

}  // namespace kingman::detail
