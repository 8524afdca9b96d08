// cuda_device_memory.h in a build without GPU code.
#include "framework/memory/cuda_device_memory.h"

namespace scopeflow {

absl::StatusOr<std::shared_ptr<DeviceMemory>> MakeCudaDeviceMemory(
    int /*device*/, size_t /*capacity*/) {
  return absl::UnavailableError(
      "CUDA device memory: this build has no GPU code (--config=cpu_only or "
      "no CUDA toolkit)");
}

}  // namespace scopeflow
