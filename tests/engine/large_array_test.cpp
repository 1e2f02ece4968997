// The pair tables' storage (engine/src/memory/large_array.hpp): every index holds what was
// written, large blocks sit on 2 MiB boundaries with the huge-page advice on their mapping, and
// moves hand the block over.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <new>
#include <sstream>
#include <string>
#include <utility>

#include "../../engine/src/memory/large_array.hpp"

namespace kingman::detail {
namespace {

// Sizes on both sides of the huge-page threshold, and one not a whole number of huge pages.
constexpr std::size_t kSmall = 1000;
constexpr std::size_t kLarge = 3 * kHugePageBytes / sizeof(double) + 5;

TEST(LargeArray, HoldsWhatIsWrittenAtEveryIndex) {
  for (const std::size_t size : {kSmall, kLarge}) {
    LargeArray<double> array(size);
    ASSERT_EQ(array.size(), size);
    ASSERT_FALSE(array.empty());
    for (std::size_t i = 0; i < size; ++i) array[i] = static_cast<double>(i) + 0.5;
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < size; ++i) wrong += array[i] != static_cast<double>(i) + 0.5;
    EXPECT_EQ(wrong, 0u) << size;
    EXPECT_EQ(array.end() - array.begin(), static_cast<std::ptrdiff_t>(size));
  }
}

TEST(LargeArray, LargeBlocksLieOnHugePageBoundaries) {
  EXPECT_FALSE(advised_onto_huge_pages(kSmall * sizeof(double)));
  EXPECT_TRUE(advised_onto_huge_pages(kLarge * sizeof(double)));
  const LargeArray<double> large(kLarge);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(large.data()) % kHugePageBytes, 0u);
  const LargeArray<double> small(kSmall);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small.data()) % alignof(double), 0u);
}

#if defined(__linux__)
// The VmFlags of the mapping that holds `address`, from /proc/self/smaps ("" if none does).
std::string mapping_flags(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

// The advice is on the block's mapping (smaps shows it as "hg") wherever the kernel has
// transparent huge pages; small blocks, which share the heap, get none.
TEST(LargeArray, LargeBlocksCarryTheHugePageAdvice) {
  if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"))
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  const LargeArray<double> large(kLarge);
  const std::string flags = mapping_flags(large.data());
  ASSERT_FALSE(flags.empty());
  EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
  const LargeArray<double> small(kSmall);
  const std::string small_flags = mapping_flags(small.data());
  EXPECT_EQ(small_flags.find(" hg"), std::string::npos) << small_flags;
}
#endif

TEST(LargeArray, MovesHandTheBlockOver) {
  LargeArray<double> first(kLarge);
  first[kLarge - 1] = 7.0;
  const double* block = first.data();
  LargeArray<double> second(std::move(first));
  EXPECT_TRUE(first.empty());  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_EQ(first.data(), nullptr);
  EXPECT_EQ(second.data(), block);
  EXPECT_EQ(second[kLarge - 1], 7.0);
  LargeArray<double> third(kSmall);
  third = std::move(second);
  EXPECT_EQ(third.data(), block);
  EXPECT_EQ(third.size(), kLarge);
  third = LargeArray<double>();
  EXPECT_TRUE(third.empty());
}

TEST(LargeArray, ASizeBeyondTheAddressSpaceThrows) {
  EXPECT_THROW(LargeArray<double>(std::numeric_limits<std::size_t>::max() / 4),
               std::bad_array_new_length);
}

}  // namespace
}  // namespace kingman::detail
