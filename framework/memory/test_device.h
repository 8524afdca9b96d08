// A device for tests of budgeted runs: its memory is host memory with an
// accounting of its own and a capacity, and its copy stream a thread that
// runs the copies in order.
#ifndef SCOPEFLOW_FRAMEWORK_MEMORY_TEST_DEVICE_H_
#define SCOPEFLOW_FRAMEWORK_MEMORY_TEST_DEVICE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "framework/memory/device_memory.h"

namespace scopeflow {

// Thread-safe. Kernels run on its buffers as on the CPU's.
class TestDevice final : public DeviceMemory {
 public:
  // Allocations past `capacity` bytes in use fail.
  explicit TestDevice(size_t capacity);
  ~TestDevice() override;

  // A copy the stream ran, for tests to compare with a plan.
  struct Copy {
    bool to_device;
    size_t bytes;
    friend bool operator==(const Copy& a, const Copy& b) {
      return a.to_device == b.to_device && a.bytes == b.bytes;
    }
  };

  Place place() const override { return CPUPlace(); }
  absl::StatusOr<std::shared_ptr<Allocation>> Allocate(size_t bytes) override;
  absl::StatusOr<uint64_t> CopyToDevice(const Tensor& host,
                                        const Tensor& device) override;
  absl::StatusOr<uint64_t> CopyToHost(const Tensor& device,
                                      const Tensor& host) override;
  absl::Status CopyOnDevice(const Tensor& from, const Tensor& to) override;
  absl::Status Wait(uint64_t ticket) override;
  absl::Status Synchronize() override;
  AllocatorStats stats() const override;

  // The copies run so far, in order.
  std::vector<Copy> copies() const;

 private:
  class Memory;
  struct Job {
    Tensor from;
    Tensor to;
    bool to_device;
  };

  absl::StatusOr<uint64_t> Enqueue(const Tensor& from, const Tensor& to,
                                   bool to_device);
  void Work();

  std::shared_ptr<Memory> memory_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> queue_;
  uint64_t queued_ = 0;
  uint64_t done_ = 0;
  bool stopping_ = false;
  std::vector<Copy> copies_;
  std::thread worker_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_MEMORY_TEST_DEVICE_H_
