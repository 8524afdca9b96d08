#include "platform/cpu_allocator.h"

#include <cstdlib>

#include "absl/status/status.h"

namespace scopeflow {

absl::StatusOr<void*> CpuAllocator::AllocateRaw(size_t bytes) {
  // aligned_alloc wants a multiple of the alignment.
  const size_t rounded = (bytes + kAllocationAlignment - 1) /
                         kAllocationAlignment * kAllocationAlignment;
  if (rounded < bytes) return absl::ResourceExhaustedError("size overflows");
  void* data = std::aligned_alloc(kAllocationAlignment, rounded);
  if (data == nullptr) {
    return absl::ResourceExhaustedError("the C library's allocator failed");
  }
  return data;
}

void CpuAllocator::FreeRaw(void* data, size_t /*bytes*/) { std::free(data); }

}  // namespace scopeflow
