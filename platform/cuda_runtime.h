// The few CUDA runtime calls the platform layer needs, behind one interface
// that also compiles without CUDA. In a build without CUDA (no nvcc found, or
// --config=cpu_only) every call reports that no device is present.
#ifndef SCOPEFLOW_PLATFORM_CUDA_RUNTIME_H_
#define SCOPEFLOW_PLATFORM_CUDA_RUNTIME_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace scopeflow {

// Whether this binary was compiled with CUDA.
bool BuiltWithCuda();

// CUDA devices usable by this process: 0 without CUDA, without a driver or
// without a GPU. Computed once.
int CudaDeviceCount();

// Device memory on `device`; an error with the CUDA runtime's message on
// failure.
absl::StatusOr<void*> CudaMalloc(int device, size_t bytes);
void CudaFree(int device, void* data);

// Copies between any two of host and device memory and waits until the
// copy is complete.
absl::Status CudaMemcpy(void* dst, const void* src, size_t bytes);

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_CUDA_RUNTIME_H_
