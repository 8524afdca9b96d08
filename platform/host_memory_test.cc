#include "platform/host_memory.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>

#include "gtest/gtest.h"

namespace scopeflow {
namespace {

TEST(HostMemoryTest, FreedBlocksComeBackFromTheHeap) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's allocator replaces glibc's malloc";
#endif
  ASSERT_TRUE(KeepFreedHostMemoryForReuse());
  constexpr size_t kBytes = 8 << 20;
  // Served from the heap (not mmap) and kept after free: the next block of
  // the same size lands at the same address.
  void* first = std::malloc(kBytes);
  ASSERT_NE(first, nullptr);
  std::memset(first, 1, kBytes);
  struct mallinfo2 info = mallinfo2();
  EXPECT_EQ(info.hblkhd, 0u) << "an 8 MiB block was mmapped";
  std::free(first);
  void* second = std::malloc(kBytes);
  EXPECT_EQ(second, first);
  std::free(second);
}

}  // namespace
}  // namespace scopeflow
