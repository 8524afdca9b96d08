// The CUDA runtime calls the platform layer needs, behind one interface
// that also compiles without CUDA. In a build without CUDA (no nvcc found, or
// --config=cpu_only) every call reports that no device is present.
//
// Streams: each thread has its own stream per device (made on first use, not
// synchronising with the legacy default stream, handed to another thread
// once this one exits). Work a thread queues on a device runs in its order;
// work of different threads may overlap.
#ifndef SCOPEFLOW_PLATFORM_CUDA_RUNTIME_H_
#define SCOPEFLOW_PLATFORM_CUDA_RUNTIME_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace scopeflow {

// A cudaStream_t, opaque to code compiled without CUDA headers.
using CudaStream = void*;

// Whether this binary was compiled with CUDA.
bool BuiltWithCuda();

// CUDA devices usable by this process: 0 without CUDA, without a driver or
// without a GPU. Computed once.
int CudaDeviceCount();

// Device memory on `device`; an error with the CUDA runtime's message on
// failure (ResourceExhausted when the device is out of memory).
absl::StatusOr<void*> CudaMalloc(int device, size_t bytes);
// Returns memory of CudaMalloc. Waits for the device's queued work first
// (as cudaFree does).
void CudaFree(int device, void* data);

// Page-locked host memory, which the device copies to and from at full
// speed and without a staging copy.
absl::StatusOr<void*> CudaHostAlloc(size_t bytes);
void CudaFreeHost(void* data);

// The calling thread's stream on `device`.
absl::StatusOr<CudaStream> CurrentCudaStream(int device);

// Waits until the work the calling thread queued on `device` is done; an
// error if any of it failed.
absl::Status SynchronizeCudaStream(int device);

// Copies `bytes` between any two of host and device memory on the calling
// thread's stream of `device`, the device involved. Returns once the bytes
// are in host memory when the destination is the host; a copy from pageable
// host memory returns once the source was read (the device may still be
// writing the destination, in stream order); a copy between device buffers
// or from page-locked memory is only queued, unless `wait` is true.
absl::Status CudaCopy(int device, void* dst, const void* src, size_t bytes,
                      bool wait);

// Whether `data` is page-locked host memory (CudaHostAlloc).
bool IsPageLockedHostMemory(const void* data);

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_CUDA_RUNTIME_H_
