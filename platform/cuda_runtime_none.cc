// The build of platform/cuda_runtime.h without CUDA: there is no device.
#include "platform/cuda_runtime.h"

namespace scopeflow {
namespace {

absl::Status NoCuda() {
  return absl::FailedPreconditionError(
      "this build of scopeflow has no CUDA support (no nvcc was found at "
      "build time, or --config=cpu_only was given)");
}

}  // namespace

bool BuiltWithCuda() { return false; }

int CudaDeviceCount() { return 0; }

absl::StatusOr<void*> CudaMalloc(int /*device*/, size_t /*bytes*/) {
  return NoCuda();
}

void CudaFree(int /*device*/, void* /*data*/) {}

absl::StatusOr<void*> CudaHostAlloc(size_t /*bytes*/) { return NoCuda(); }

void CudaFreeHost(void* /*data*/) {}

absl::StatusOr<CudaStream> CurrentCudaStream(int /*device*/) {
  return NoCuda();
}

absl::Status SynchronizeCudaStream(int /*device*/) { return NoCuda(); }

absl::Status CudaCopy(int /*device*/, void* /*dst*/, const void* /*src*/,
                      size_t /*bytes*/, bool /*wait*/) {
  return NoCuda();
}

bool IsPageLockedHostMemory(const void* /*data*/) { return false; }

absl::StatusOr<int64_t*> DeviceCheckSlot(int /*device*/, std::string /*what*/) {
  return NoCuda();
}

absl::Status TakeDeviceCheckFailure(int /*device*/) { return absl::OkStatus(); }

absl::Status DiscardDeviceChecks(int /*device*/) { return absl::OkStatus(); }

}  // namespace scopeflow
