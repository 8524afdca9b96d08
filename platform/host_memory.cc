#include "platform/host_memory.h"

#include <malloc.h>

namespace scopeflow {

bool KeepFreedHostMemoryForReuse() {
  constexpr int kLargestHeapBlock = 32 << 20;  // glibc's cap on 64-bit.
  constexpr int kNeverTrim = 1 << 30;
  const bool mmap_set = mallopt(M_MMAP_THRESHOLD, kLargestHeapBlock) == 1;
  const bool trim_set = mallopt(M_TRIM_THRESHOLD, kNeverTrim) == 1;
  return mmap_set && trim_set;
}

}  // namespace scopeflow
