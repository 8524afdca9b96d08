#include "platform/cuda_allocator.h"

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "platform/cuda_runtime.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

class DeviceBackend final : public BlockCacheBackend {
 public:
  explicit DeviceBackend(int device) : device_(device) {}
  absl::StatusOr<void*> Malloc(size_t bytes) override {
    return CudaMalloc(device_, bytes);
  }
  void Free(void* data, size_t /*bytes*/) override { CudaFree(device_, data); }

 private:
  const int device_;
};

class PinnedBackend final : public BlockCacheBackend {
 public:
  absl::StatusOr<void*> Malloc(size_t bytes) override {
    return CudaHostAlloc(bytes);
  }
  void Free(void* data, size_t /*bytes*/) override { CudaFreeHost(data); }
};

// SCOPEFLOW_CUDA_MEMORY_LIMIT_MB in bytes; 0 when unset or not a number.
size_t LimitFromEnvironment() {
  const char* text = std::getenv("SCOPEFLOW_CUDA_MEMORY_LIMIT_MB");
  uint64_t mib = 0;
  if (text == nullptr || !absl::SimpleAtoi(text, &mib)) return 0;
  return static_cast<size_t>(mib) << 20;
}

absl::StatusOr<CudaAllocator*> CudaAllocatorOf(const Place& place) {
  SF_CHECK(place.is_cuda(), "place %s is not a CUDA device", place.ToString());
  SF_ASSIGN_OR_RETURN(Allocator * allocator, GetAllocator(place));
  return static_cast<CudaAllocator*>(allocator);
}

}  // namespace

CudaAllocator::CudaAllocator(int device)
    : Allocator(CUDAPlace(device)),
      cache_(std::make_unique<DeviceBackend>(device), LimitFromEnvironment()) {}

absl::StatusOr<void*> CudaAllocator::AllocateRaw(size_t bytes) {
  SF_ASSIGN_OR_RETURN(CudaStream stream, CurrentCudaStream(place().device()));
  absl::StatusOr<void*> data =
      cache_.Allocate(bytes, reinterpret_cast<uintptr_t>(stream));
  if (!data.ok()) {
    return absl::Status(
        data.status().code(),
        absl::StrFormat("%s: %s", place().ToString(), data.status().message()));
  }
  return data;
}

void CudaAllocator::FreeRaw(void* data, size_t /*bytes*/) { cache_.Free(data); }

PinnedHostAllocator::PinnedHostAllocator()
    : Allocator(CPUPlace()), cache_(std::make_unique<PinnedBackend>()) {}

absl::StatusOr<void*> PinnedHostAllocator::AllocateRaw(size_t bytes) {
  // Copies out of page-locked memory wait for their completion (see
  // CopyBytes), so one stream serves every block.
  return cache_.Allocate(bytes, /*stream=*/0);
}

void PinnedHostAllocator::FreeRaw(void* data, size_t /*bytes*/) {
  cache_.Free(data);
}

absl::StatusOr<Allocator*> GetPinnedHostAllocator() {
  SF_CHECK_CODE(CudaDeviceCount() > 0, absl::StatusCode::kFailedPrecondition,
                "page-locked host memory needs a CUDA device, and none is "
                "present");
  static const std::shared_ptr<Allocator> allocator =
      std::make_shared<PinnedHostAllocator>();
  return allocator.get();
}

absl::StatusOr<BlockCacheStats> GetCudaMemoryStats(const Place& place) {
  SF_ASSIGN_OR_RETURN(CudaAllocator * allocator, CudaAllocatorOf(place));
  return allocator->cache().stats();
}

absl::Status SetCudaMemoryLimit(const Place& place, size_t bytes) {
  SF_ASSIGN_OR_RETURN(CudaAllocator * allocator, CudaAllocatorOf(place));
  allocator->cache().SetLimit(bytes);
  return absl::OkStatus();
}

absl::Status ReleaseCachedCudaMemory(const Place& place) {
  SF_ASSIGN_OR_RETURN(CudaAllocator * allocator, CudaAllocatorOf(place));
  allocator->cache().ReleaseCached();
  return absl::OkStatus();
}

}  // namespace scopeflow
