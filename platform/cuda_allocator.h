// The allocators of CUDA memory: device memory of one CUDA device, and
// page-locked host memory for transfers. Both cache what is freed
// (platform/block_cache.h): the CUDA calls that take and give back memory
// synchronise the device and cost far more than a kernel.
#ifndef SCOPEFLOW_PLATFORM_CUDA_ALLOCATOR_H_
#define SCOPEFLOW_PLATFORM_CUDA_ALLOCATOR_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "platform/allocator.h"
#include "platform/block_cache.h"
#include "platform/place.h"

namespace scopeflow {

// Device memory of `device`, cached per stream: a block freed by work of
// one thread's stream goes back to that stream's cache. The memory the
// cache may reserve is capped by SetCudaMemoryLimit or, at start, by the
// environment variable SCOPEFLOW_CUDA_MEMORY_LIMIT_MB. A buffer handed to
// another thread must not be freed while work of the thread that
// allocated it may still read it (runs end with their work done, see
// Executor::Run).
class CudaAllocator final : public Allocator {
 public:
  explicit CudaAllocator(int device);

  BlockCache& cache() { return cache_; }

 protected:
  absl::StatusOr<void*> AllocateRaw(size_t bytes) override;
  void FreeRaw(void* data, size_t bytes) override;

 private:
  BlockCache cache_;
};

// Page-locked host memory (a CPU place), in which copies from a device
// land at full speed: Tensor::CopyTo uses it for device-to-host copies.
class PinnedHostAllocator final : public Allocator {
 public:
  PinnedHostAllocator();

 protected:
  absl::StatusOr<void*> AllocateRaw(size_t bytes) override;
  void FreeRaw(void* data, size_t bytes) override;

 private:
  BlockCache cache_;
};

// The page-locked host allocator; an error in builds without CUDA or
// where no device is present.
absl::StatusOr<Allocator*> GetPinnedHostAllocator();

// The caching statistics of `place`'s device memory (bytes in use,
// reserved, peaks, segment calls). An error for a place that is not an
// available CUDA device.
absl::StatusOr<BlockCacheStats> GetCudaMemoryStats(const Place& place);
// Caps the device memory the allocator of `place` reserves (0: no cap).
absl::Status SetCudaMemoryLimit(const Place& place, size_t bytes);
// Gives the cached device memory of `place` back to the device.
absl::Status ReleaseCachedCudaMemory(const Place& place);

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_CUDA_ALLOCATOR_H_
