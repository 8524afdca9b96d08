// Device memory of one CUDA device, straight from cudaMalloc.
#ifndef SCOPEFLOW_PLATFORM_CUDA_ALLOCATOR_H_
#define SCOPEFLOW_PLATFORM_CUDA_ALLOCATOR_H_

#include "platform/allocator.h"

namespace scopeflow {

class CudaAllocator final : public Allocator {
 public:
  explicit CudaAllocator(int device) : Allocator(CUDAPlace(device)) {}

 protected:
  absl::StatusOr<void*> AllocateRaw(size_t bytes) override;
  void FreeRaw(void* data, size_t bytes) override;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_CUDA_ALLOCATOR_H_
