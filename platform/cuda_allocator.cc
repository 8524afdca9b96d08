#include "platform/cuda_allocator.h"

#include "platform/cuda_runtime.h"

namespace scopeflow {

absl::StatusOr<void*> CudaAllocator::AllocateRaw(size_t bytes) {
  // cudaMalloc aligns to 256 bytes, a multiple of kAllocationAlignment.
  return CudaMalloc(place().device(), bytes);
}

void CudaAllocator::FreeRaw(void* data, size_t /*bytes*/) {
  CudaFree(place().device(), data);
}

}  // namespace scopeflow
