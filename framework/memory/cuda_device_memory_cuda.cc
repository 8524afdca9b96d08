// cuda_device_memory.h in a build with GPU code.
#include <cuda_runtime_api.h>

#include <cstring>
#include <deque>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "framework/memory/cuda_device_memory.h"
#include "platform/allocator.h"
#include "platform/cuda_runtime.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status CudaError(cudaError_t error, const char* what) {
  const std::string message =
      absl::StrFormat("CUDA device memory: %s failed: %s (%s)", what,
                      cudaGetErrorString(error), cudaGetErrorName(error));
  if (error == cudaErrorMemoryAllocation) {
    return absl::ResourceExhaustedError(message);
  }
  return absl::InternalError(message);
}

#define SF_CUDA(call, what)                                  \
  do {                                                       \
    const cudaError_t sf_cuda_error = (call);                \
    if (sf_cuda_error != cudaSuccess) {                      \
      return CudaError(sf_cuda_error, what);                 \
    }                                                        \
  } while (false)

// cudaMalloc'd memory of one device, counted apart from the device's
// caching allocator, up to a capacity: a budgeted run's peak is what this
// counts.
class BudgetedMemory final : public Allocator {
 public:
  BudgetedMemory(int device, size_t capacity)
      : Allocator(CUDAPlace(device)), device_(device), capacity_(capacity) {}

 protected:
  absl::StatusOr<void*> AllocateRaw(size_t bytes) override {
    const size_t in_use = static_cast<size_t>(stats().bytes_in_use);
    if (in_use + bytes > capacity_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "CUDA device memory of cuda:", device_, ": ", bytes,
          " bytes asked with ", in_use, " of ", capacity_, " in use"));
    }
    return CudaMalloc(device_, bytes);
  }
  // cudaFree waits for the device's queued work, so no kernel or copy
  // still uses the memory.
  void FreeRaw(void* data, size_t /*bytes*/) override {
    CudaFree(device_, data);
  }

 private:
  const int device_;
  const size_t capacity_;
};

// Owns the copy stream, its events and the pinned staging buffers.
class CudaDeviceMemory final : public DeviceMemory {
 public:
  CudaDeviceMemory(int device, size_t capacity, cudaStream_t copy_stream)
      : device_(device),
        memory_(std::make_shared<BudgetedMemory>(device, capacity)),
        copy_stream_(copy_stream) {}

  ~CudaDeviceMemory() override {
    Synchronize().IgnoreError();
    absl::MutexLock lock(&mutex_);
    cudaSetDevice(device_);
    for (cudaEvent_t event : free_events_) cudaEventDestroy(event);
    for (auto& [bytes, buffers] : free_pinned_) {
      for (void* buffer : buffers) CudaFreeHost(buffer);
    }
    cudaStreamDestroy(copy_stream_);
  }

  Place place() const override { return CUDAPlace(device_); }

  absl::StatusOr<std::shared_ptr<Allocation>> Allocate(size_t bytes) override {
    return memory_->Allocate(bytes);
  }

  absl::StatusOr<uint64_t> CopyToDevice(const Tensor& host,
                                        const Tensor& device) override {
    SF_RETURN_IF_ERROR(CheckCopy(host, device, /*to_device=*/true));
    absl::MutexLock lock(&mutex_);
    Job job{0, nullptr, host, device, nullptr, host.nbytes(), false};
    const void* source = host.raw_data();
    if (!IsPageLockedHostMemory(source)) {
      SF_ASSIGN_OR_RETURN(job.pinned, TakePinned(job.bytes));
      std::memcpy(job.pinned, source, job.bytes);
      source = job.pinned;
    }
    Tensor target = device;
    SF_RETURN_IF_ERROR(Queue(job, target.raw_data(), source,
                             cudaMemcpyHostToDevice));
    return Push(std::move(job));
  }

  absl::StatusOr<uint64_t> CopyToHost(const Tensor& device,
                                      const Tensor& host) override {
    SF_RETURN_IF_ERROR(CheckCopy(device, host, /*to_device=*/false));
    absl::MutexLock lock(&mutex_);
    Job job{0, nullptr, device, host, nullptr, device.nbytes(), true};
    SF_ASSIGN_OR_RETURN(job.pinned, TakePinned(job.bytes));
    SF_RETURN_IF_ERROR(Queue(job, job.pinned, device.raw_data(),
                             cudaMemcpyDeviceToHost));
    return Push(std::move(job));
  }

  absl::Status CopyOnDevice(const Tensor& from, const Tensor& to) override {
    SF_CHECK(from.dtype() == to.dtype() && from.nbytes() == to.nbytes() &&
                 from.place() == place() && to.place() == place(),
             "CUDA device memory: a copy on %s from %s to %s",
             place().ToString(), from.DebugString(), to.DebugString());
    // On the calling thread's stream, in order with its kernels.
    Tensor target = to;
    return CudaCopy(device_, target.raw_data(), from.raw_data(),
                    from.nbytes(), /*wait=*/true);
  }

  absl::Status Wait(uint64_t ticket) override {
    absl::MutexLock lock(&mutex_);
    while (!queue_.empty() && queue_.front().ticket <= ticket) {
      Job job = std::move(queue_.front());
      queue_.pop_front();
      const cudaError_t error = cudaEventSynchronize(job.done);
      if (error != cudaSuccess && failure_.ok()) {
        failure_ = CudaError(error, "a copy on the copy stream");
      }
      if (error == cudaSuccess && job.to_host) {
        std::memcpy(job.to.raw_data(), job.pinned, job.bytes);
      }
      free_events_.push_back(job.done);
      if (job.pinned != nullptr) free_pinned_[job.bytes].push_back(job.pinned);
      // The tensors' buffers are let go here, the copy done.
    }
    return failure_;
  }

  absl::Status Synchronize() override {
    uint64_t last = 0;
    {
      absl::MutexLock lock(&mutex_);
      last = queued_;
    }
    return Wait(last);
  }

  AllocatorStats stats() const override { return memory_->stats(); }

 private:
  struct Job {
    uint64_t ticket;
    cudaEvent_t done;
    // Held until the copy is done.
    Tensor from;
    Tensor to;
    void* pinned;
    size_t bytes;
    bool to_host;
  };

  absl::Status CheckCopy(const Tensor& from, const Tensor& to,
                         bool to_device) const {
    const Tensor& host = to_device ? from : to;
    const Tensor& device = to_device ? to : from;
    SF_CHECK(from.dtype() == to.dtype() && from.nbytes() == to.nbytes() &&
                 from.initialized() && to.initialized() &&
                 host.place().is_cpu() && device.place() == place(),
             "CUDA device memory: a copy %s from %s to %s",
             to_device ? "to the device" : "to the host", from.DebugString(),
             to.DebugString());
    return absl::OkStatus();
  }

  absl::StatusOr<void*> TakePinned(size_t bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    std::vector<void*>& buffers = free_pinned_[bytes];
    if (!buffers.empty()) {
      void* buffer = buffers.back();
      buffers.pop_back();
      return buffer;
    }
    return CudaHostAlloc(bytes);
  }

  absl::StatusOr<cudaEvent_t> TakeEvent() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    if (!free_events_.empty()) {
      cudaEvent_t event = free_events_.back();
      free_events_.pop_back();
      return event;
    }
    cudaEvent_t event = nullptr;
    SF_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
            "cudaEventCreate");
    return event;
  }

  // Queues the copy behind the kernels the calling thread queued so far
  // (which may still read or write either buffer), then its done event.
  absl::Status Queue(Job& job, void* dst, const void* src, cudaMemcpyKind kind)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    SF_ASSIGN_OR_RETURN(CudaStream compute, CurrentCudaStream(device_));
    SF_ASSIGN_OR_RETURN(cudaEvent_t kernels_done, TakeEvent());
    absl::Status queued = [&]() -> absl::Status {
      SF_CUDA(cudaEventRecord(kernels_done,
                              static_cast<cudaStream_t>(compute)),
              "cudaEventRecord");
      SF_CUDA(cudaStreamWaitEvent(copy_stream_, kernels_done, 0),
              "cudaStreamWaitEvent");
      SF_CUDA(cudaMemcpyAsync(dst, src, job.bytes, kind, copy_stream_),
              "cudaMemcpyAsync");
      return absl::OkStatus();
    }();
    // An event may be recorded again once the stream waiting on it has
    // captured it.
    free_events_.push_back(kernels_done);
    if (!queued.ok()) {
      if (job.pinned != nullptr) free_pinned_[job.bytes].push_back(job.pinned);
      return queued;
    }
    SF_ASSIGN_OR_RETURN(job.done, TakeEvent());
    SF_CUDA(cudaEventRecord(job.done, copy_stream_), "cudaEventRecord");
    return absl::OkStatus();
  }

  uint64_t Push(Job job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    job.ticket = ++queued_;
    queue_.push_back(std::move(job));
    return queued_;
  }

  const int device_;
  const std::shared_ptr<BudgetedMemory> memory_;
  const cudaStream_t copy_stream_;
  absl::Mutex mutex_;
  std::deque<Job> queue_ ABSL_GUARDED_BY(mutex_);
  uint64_t queued_ ABSL_GUARDED_BY(mutex_) = 0;
  absl::Status failure_ ABSL_GUARDED_BY(mutex_);
  std::vector<cudaEvent_t> free_events_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<size_t, std::vector<void*>> free_pinned_
      ABSL_GUARDED_BY(mutex_);
};

}  // namespace

absl::StatusOr<std::shared_ptr<DeviceMemory>> MakeCudaDeviceMemory(
    int device, size_t capacity) {
  if (device < 0 || device >= CudaDeviceCount()) {
    return absl::UnavailableError(absl::StrCat(
        "CUDA device memory: no CUDA device ", device, " (", CudaDeviceCount(),
        " present)"));
  }
  SF_CUDA(cudaSetDevice(device), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  SF_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
          "cudaStreamCreate");
  return std::make_shared<CudaDeviceMemory>(device, capacity, stream);
}

}  // namespace scopeflow
