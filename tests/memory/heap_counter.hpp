#pragma once
// Live heap bytes taken through operator new in this process, and the most since a reset: the
// memory tests' measure of what a run allocates. heap_counter.cpp replaces the global
// operator new and delete of the binary that links it (memory_tests alone), counting each
// block by malloc_usable_size, so the counts include what the allocator rounds up.
#include <cstddef>

namespace kingman::testing_support {

// Bytes live now.
std::size_t live_heap_bytes();
// The most bytes live at once since the last reset_peak_heap_bytes().
std::size_t peak_heap_bytes();
// Starts a new peak from the bytes live now.
void reset_peak_heap_bytes();

}  // namespace kingman::testing_support
