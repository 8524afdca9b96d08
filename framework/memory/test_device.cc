#include "framework/memory/test_device.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "platform/status_macros.h"

namespace scopeflow {

// Host memory counted apart from the CPU's allocator, up to a capacity.
class TestDevice::Memory final : public Allocator {
 public:
  explicit Memory(size_t capacity) : Allocator(CPUPlace()), capacity_(capacity) {}

 protected:
  absl::StatusOr<void*> AllocateRaw(size_t bytes) override {
    const size_t in_use = static_cast<size_t>(stats().bytes_in_use);
    if (in_use + bytes > capacity_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "test device: ", bytes, " bytes asked with ", in_use, " of ",
          capacity_, " in use"));
    }
    const size_t rounded =
        (bytes + kAllocationAlignment - 1) / kAllocationAlignment *
        kAllocationAlignment;
    void* data = std::aligned_alloc(kAllocationAlignment, rounded);
    if (data == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("test device: out of host memory for ", bytes));
    }
    return data;
  }
  void FreeRaw(void* data, size_t bytes) override { std::free(data); }

 private:
  const size_t capacity_;
};

TestDevice::TestDevice(size_t capacity)
    : memory_(std::make_shared<Memory>(capacity)),
      worker_([this] { Work(); }) {}

TestDevice::~TestDevice() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

absl::StatusOr<std::shared_ptr<Allocation>> TestDevice::Allocate(
    size_t bytes) {
  return memory_->Allocate(bytes);
}

absl::StatusOr<uint64_t> TestDevice::Enqueue(const Tensor& from,
                                             const Tensor& to,
                                             bool to_device) {
  SF_CHECK(from.dtype() == to.dtype() && from.nbytes() == to.nbytes() &&
               from.initialized() && to.initialized(),
           "test device: a copy from %s to %s", from.DebugString(),
           to.DebugString());
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back({from, to, to_device});
  changed_.notify_all();
  return ++queued_;
}

absl::StatusOr<uint64_t> TestDevice::CopyToDevice(const Tensor& host,
                                                  const Tensor& device) {
  return Enqueue(host, device, /*to_device=*/true);
}

absl::StatusOr<uint64_t> TestDevice::CopyToHost(const Tensor& device,
                                                const Tensor& host) {
  return Enqueue(device, host, /*to_device=*/false);
}

absl::Status TestDevice::CopyOnDevice(const Tensor& from, const Tensor& to) {
  SF_CHECK(from.dtype() == to.dtype() && from.nbytes() == to.nbytes(),
           "test device: a copy from %s to %s", from.DebugString(),
           to.DebugString());
  Tensor target = to;
  std::memcpy(target.raw_data(), from.raw_data(), from.nbytes());
  return absl::OkStatus();
}

void TestDevice::Work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    std::memcpy(job.to.raw_data(), job.from.raw_data(), job.from.nbytes());
    const Copy copy{job.to_device, job.from.nbytes()};
    // The buffers are let go before the copy counts as done.
    job = Job();
    lock.lock();
    copies_.push_back(copy);
    ++done_;
    changed_.notify_all();
  }
}

absl::Status TestDevice::Wait(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return done_ >= ticket; });
  return absl::OkStatus();
}

absl::Status TestDevice::Synchronize() {
  uint64_t last = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    last = queued_;
  }
  return Wait(last);
}

AllocatorStats TestDevice::stats() const { return memory_->stats(); }

std::vector<TestDevice::Copy> TestDevice::copies() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return copies_;
}

}  // namespace scopeflow
