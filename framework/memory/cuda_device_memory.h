// The memory of a CUDA device for budgeted runs (device_memory.h): buffers
// cudaMalloc'd within a capacity, and a copy stream of its own between
// them and pinned host buffers, so that a prefetch overlaps the kernels
// the run queued on its own stream.
#ifndef SCOPEFLOW_FRAMEWORK_MEMORY_CUDA_DEVICE_MEMORY_H_
#define SCOPEFLOW_FRAMEWORK_MEMORY_CUDA_DEVICE_MEMORY_H_

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "framework/memory/device_memory.h"

namespace scopeflow {

// The DeviceMemory of CUDA device `device`, handing out at most `capacity`
// bytes (ResourceExhausted past it). A copy to the device is staged
// through a pinned host buffer (unless the source is pinned already) and
// queued on the copy stream behind the kernels the calling thread queued
// so far; a copy to the host lands in a pinned buffer and reaches its host
// tensor when waited for. Unavailable in a build without GPU code
// (--config=cpu_only, no CUDA toolkit) or where the device is absent, so
// that callers (tests) can skip. Thread-safe.
absl::StatusOr<std::shared_ptr<DeviceMemory>> MakeCudaDeviceMemory(
    int device, size_t capacity);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_MEMORY_CUDA_DEVICE_MEMORY_H_
