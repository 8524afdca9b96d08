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
#include <string>

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

// Checks of input values that only a kernel sees (an index in range, a
// label in range), reported without making the host wait for the kernel:
// the kernel writes the first bad value it finds into a slot of mapped
// host memory, and the host reads the slots once the stream is
// synchronised anyway (at the end of Executor::Run).
//
// The value a slot holds while no bad value was found.
inline constexpr int64_t kDeviceCheckPassed = INT64_MIN;
// A slot for one kernel call of the calling thread on `device`, holding
// kDeviceCheckPassed; `what` says what a value written there means, e.g.
// `op 3 (gather): input "Index" (variable "ids") holds an index outside
// [0, 10)`. The pointer is valid in kernels on that device.
// With `with_value` false the message is `what` alone (the value only
// tells that the check failed).
absl::StatusOr<int64_t*> DeviceCheckSlot(int device, std::string what,
                                         bool with_value = true);
// After SynchronizeCudaStream(device): InvalidArgument "<what>: <value>"
// (or `what` with its first "$0" replaced by the value) for the first slot
// a kernel wrote since the last call, or OK. Frees the calling thread's
// slots either way.
absl::Status TakeDeviceCheckFailure(int device);
// Frees slots a run that failed early left behind, first waiting for the
// kernels that may still write them. Costs nothing when there are none.
absl::Status DiscardDeviceChecks(int device);

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_CUDA_RUNTIME_H_
