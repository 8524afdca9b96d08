// The CUDA build of platform/cuda_runtime.h.
#include <cuda_runtime_api.h>

#include "absl/strings/str_format.h"
#include "platform/cuda_runtime.h"

namespace scopeflow {
namespace {

absl::Status CudaError(cudaError_t error, const char* what) {
  return absl::InternalError(absl::StrFormat("%s failed: %s (%s)", what,
                                             cudaGetErrorString(error),
                                             cudaGetErrorName(error)));
}

}  // namespace

bool BuiltWithCuda() { return true; }

int CudaDeviceCount() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      // No driver or no device: clear the sticky error and report none.
      cudaGetLastError();
      return 0;
    }
    return n;
  }();
  return count;
}

absl::StatusOr<void*> CudaMalloc(int device, size_t bytes) {
  cudaError_t error = cudaSetDevice(device);
  if (error != cudaSuccess) return CudaError(error, "cudaSetDevice");
  void* data = nullptr;
  error = cudaMalloc(&data, bytes);
  if (error != cudaSuccess) return CudaError(error, "cudaMalloc");
  return data;
}

void CudaFree(int device, void* data) {
  cudaSetDevice(device);
  cudaFree(data);
}

absl::Status CudaMemcpy(void* dst, const void* src, size_t bytes) {
  cudaError_t error = cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
  if (error != cudaSuccess) return CudaError(error, "cudaMemcpy");
  return absl::OkStatus();
}

}  // namespace scopeflow
