// Host memory from the C library, aligned to kAllocationAlignment.
#ifndef SCOPEFLOW_PLATFORM_CPU_ALLOCATOR_H_
#define SCOPEFLOW_PLATFORM_CPU_ALLOCATOR_H_

#include "platform/allocator.h"

namespace scopeflow {

class CpuAllocator final : public Allocator {
 public:
  CpuAllocator() : Allocator(CPUPlace()) {}

 protected:
  absl::StatusOr<void*> AllocateRaw(size_t bytes) override;
  void FreeRaw(void* data, size_t bytes) override;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_CPU_ALLOCATOR_H_
