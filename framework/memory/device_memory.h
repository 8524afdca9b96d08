// The memory of a device as a budgeted run (offload_run.h) uses it:
// buffers its kernels read and write, and a copy stream between them and
// host memory. A CUDA device implements it with its allocator, a stream of
// its own for copies and pinned host buffers; TestDevice implements it in
// host memory so that CI checks budgeted runs without a GPU.
#ifndef SCOPEFLOW_FRAMEWORK_MEMORY_DEVICE_MEMORY_H_
#define SCOPEFLOW_FRAMEWORK_MEMORY_DEVICE_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "framework/tensor.h"
#include "platform/allocator.h"
#include "platform/place.h"

namespace scopeflow {

// Thread-safe. Copies run in the order they were queued.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;

  // Where kernels run on this memory's buffers: the place of the tensors
  // that view them.
  virtual Place place() const = 0;

  // `bytes` of device memory, freed when the last tensor viewing it is
  // gone. ResourceExhausted where the device has no more.
  virtual absl::StatusOr<std::shared_ptr<Allocation>> Allocate(
      size_t bytes) = 0;

  // Queues a copy of `host`'s elements (a tensor on the CPU) into
  // `device` (viewing this memory), or back, of the same dtype and size.
  // Both tensors' buffers are held until the copy is done. Returns a
  // ticket for Wait.
  virtual absl::StatusOr<uint64_t> CopyToDevice(const Tensor& host,
                                                const Tensor& device) = 0;
  virtual absl::StatusOr<uint64_t> CopyToHost(const Tensor& device,
                                              const Tensor& host) = 0;
  // A copy within the device, done before this returns.
  virtual absl::Status CopyOnDevice(const Tensor& from, const Tensor& to) = 0;

  // Waits until the copy `ticket` and all queued before it are done; the
  // buffers they held are let go by then. The first copy that failed is
  // the error.
  virtual absl::Status Wait(uint64_t ticket) = 0;
  // Waits for every copy queued.
  virtual absl::Status Synchronize() = 0;

  // What the device's memory holds: bytes handed out and not freed, and
  // the most since it was made.
  virtual AllocatorStats stats() const = 0;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_MEMORY_DEVICE_MEMORY_H_
