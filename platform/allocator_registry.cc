// GetAllocator: one allocator per place, made on first use.
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "platform/allocator.h"
#include "platform/cpu_allocator.h"
#include "platform/cuda_allocator.h"
#include "platform/device.h"
#include "platform/mutex.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

class AllocatorRegistry {
 public:
  absl::StatusOr<Allocator*> Get(const Place& place) {
    if (place.is_cpu()) return cpu_.get();
    SF_RETURN_IF_ERROR(CheckPlaceAvailable(place));
    MutexLock lock(&mutex_);
    std::shared_ptr<Allocator>& allocator = cuda_[place];
    if (allocator == nullptr) {
      allocator = std::make_shared<CudaAllocator>(place.device());
    }
    return allocator.get();
  }

 private:
  const std::shared_ptr<Allocator> cpu_ = std::make_shared<CpuAllocator>();
  Mutex mutex_;
  absl::flat_hash_map<Place, std::shared_ptr<Allocator>> cuda_
      ABSL_GUARDED_BY(mutex_);
};

AllocatorRegistry& Registry() {
  // Allocations keep their allocator alive, so tensors freed while the
  // process exits stay safe after the registry is destroyed.
  static AllocatorRegistry registry;
  return registry;
}

}  // namespace

absl::StatusOr<Allocator*> GetAllocator(const Place& place) {
  return Registry().Get(place);
}

}  // namespace scopeflow
