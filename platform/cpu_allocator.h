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

// Whether CpuAllocator advises blocks of 2 MiB or more for transparent huge
// pages (cpu_allocator.cc says why); on unless set off. A server that would
// rather not wait for the kernel to assemble a huge page at a block's first
// touch can set it off. Process-wide; it applies to blocks allocated after
// the call.
void SetHugePagesForLargeHostBlocks(bool enabled);
bool HugePagesForLargeHostBlocks();

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_CPU_ALLOCATOR_H_
