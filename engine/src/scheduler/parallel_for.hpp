#pragma once
// kingman's one entry point for data-parallel loops: body(range) for sub-ranges (a
// tbb::blocked_range<std::size_t>) of [begin, end) on the current oneTBB arena. Bodies must write
// disjoint outputs, so the split never changes a value; reductions happen afterwards, in index
// order.
//
// Under ThreadSanitizer the fork/join synchronization of the loop lives inside libtbb, which is
// not instrumented: the loop declares those edges itself (release before the fork, acquire in
// each task; release at each task's end, acquire after the join), so that TSan checks
// kingman's own accesses without false reports about data handed to the tasks.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstddef>

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#endif

namespace kingman::detail {

template <typename Body>
void parallel_for_range(std::size_t begin, std::size_t end, const Body& body) {
#if defined(__SANITIZE_THREAD__)
  char fork_token = 0, join_token = 0;
  __tsan_release(&fork_token);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(begin, end), [&](const auto& range) {
    __tsan_acquire(&fork_token);
    body(range);
    __tsan_release(&join_token);
  });
  __tsan_acquire(&join_token);
#else
  tbb::parallel_for(tbb::blocked_range<std::size_t>(begin, end), body);
#endif
}

}  // namespace kingman::detail
