// The CUDA build of platform/cuda_runtime.h.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "platform/cuda_runtime.h"
#include "platform/mutex.h"

namespace scopeflow {
namespace {

absl::Status CudaError(cudaError_t error, const char* what) {
  const std::string message =
      absl::StrFormat("%s failed: %s (%s)", what, cudaGetErrorString(error),
                      cudaGetErrorName(error));
  if (error == cudaErrorMemoryAllocation) {
    return absl::ResourceExhaustedError(message);
  }
  return absl::InternalError(message);
}

// Streams of threads that exited, per device, for threads that come later:
// a serving process whose pool threads come and go keeps a bounded number.
class StreamPool {
 public:
  absl::StatusOr<cudaStream_t> Take(int device) {
    {
      MutexLock lock(&mu_);
      if (device < static_cast<int>(free_.size()) && !free_[device].empty()) {
        cudaStream_t stream = free_[device].back();
        free_[device].pop_back();
        return stream;
      }
    }
    cudaStream_t stream = nullptr;
    cudaError_t error =
        cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (error != cudaSuccess) return CudaError(error, "cudaStreamCreate");
    return stream;
  }

  void Give(int device, cudaStream_t stream) {
    MutexLock lock(&mu_);
    if (device >= static_cast<int>(free_.size())) free_.resize(device + 1);
    free_[device].push_back(stream);
  }

 private:
  Mutex mu_;
  std::vector<std::vector<cudaStream_t>> free_ ABSL_GUARDED_BY(mu_);
};

StreamPool& Pool() {
  static StreamPool pool;
  return pool;
}

// Slots of DeviceCheckSlot: mapped page-locked memory, so that kernels
// write it directly and the host reads it with no copy.
class DeviceChecks {
 public:
  static constexpr int kSlots = 4096;

  ~DeviceChecks() {
    if (slots_ != nullptr) cudaFreeHost(slots_);
  }

  absl::StatusOr<int64_t*> Slot(std::string what, bool with_value) {
    if (slots_ == nullptr) {
      void* memory = nullptr;
      cudaError_t error =
          cudaHostAlloc(&memory, kSlots * sizeof(int64_t),
                        cudaHostAllocMapped | cudaHostAllocPortable);
      if (error != cudaSuccess) {
        cudaGetLastError();
        return CudaError(error, "cudaHostAlloc (device check slots)");
      }
      slots_ = static_cast<int64_t*>(memory);
    }
    // Past the last slot, calls share it (and its message): a run with
    // that many checking kernels still reports that one failed.
    const int slot = std::min<int>(used_.size(), kSlots - 1);
    if (slot == static_cast<int>(used_.size())) {
      used_.push_back({std::move(what), with_value});
    }
    slots_[slot] = kDeviceCheckPassed;
    int64_t* device_pointer = nullptr;
    cudaError_t error = cudaHostGetDevicePointer(
        reinterpret_cast<void**>(&device_pointer), slots_ + slot, 0);
    if (error != cudaSuccess) {
      cudaGetLastError();
      return CudaError(error, "cudaHostGetDevicePointer");
    }
    return device_pointer;
  }

  bool empty() const { return used_.empty(); }

  absl::Status TakeFailure() {
    absl::Status failure;
    for (size_t slot = 0; slot < used_.size(); ++slot) {
      const int64_t value = reinterpret_cast<volatile int64_t*>(slots_)[slot];
      if (value != kDeviceCheckPassed) {
        std::string message = used_[slot].what;
        const size_t at = message.find("$0");
        if (!used_[slot].with_value) {
        } else if (at == std::string::npos) {
          absl::StrAppend(&message, ": ", value);
        } else {
          message.replace(at, 2, absl::StrCat(value));
        }
        failure = absl::InvalidArgumentError(message);
        break;
      }
    }
    used_.clear();
    return failure;
  }

 private:
  struct Check {
    std::string what;
    bool with_value;
  };
  int64_t* slots_ = nullptr;
  std::vector<Check> used_;
};

// The calling thread's streams, given back to the pool when it exits.
struct ThreadStreams {
  std::vector<cudaStream_t> by_device;
  std::vector<std::unique_ptr<DeviceChecks>> checks;
  int current_device = -1;

  ~ThreadStreams() {
    for (int device = 0; device < static_cast<int>(by_device.size());
         ++device) {
      if (by_device[device] == nullptr) continue;
      // Work still queued runs on; the next owner's work follows it.
      Pool().Give(device, by_device[device]);
    }
  }
};

thread_local ThreadStreams thread_streams;

absl::Status UseDevice(int device) {
  if (thread_streams.current_device == device) return absl::OkStatus();
  cudaError_t error = cudaSetDevice(device);
  if (error != cudaSuccess) return CudaError(error, "cudaSetDevice");
  thread_streams.current_device = device;
  return absl::OkStatus();
}

bool IsHostMemory(const void* data) {
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, data) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  return attributes.type == cudaMemoryTypeUnregistered ||
         attributes.type == cudaMemoryTypeHost;
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
  absl::Status used = UseDevice(device);
  if (!used.ok()) return used;
  void* data = nullptr;
  cudaError_t error = cudaMalloc(&data, bytes);
  if (error != cudaSuccess) {
    cudaGetLastError();
    return CudaError(error, "cudaMalloc");
  }
  return data;
}

void CudaFree(int device, void* data) {
  if (UseDevice(device).ok()) cudaFree(data);
}

absl::StatusOr<void*> CudaHostAlloc(size_t bytes) {
  void* data = nullptr;
  cudaError_t error = cudaHostAlloc(&data, bytes, cudaHostAllocPortable);
  if (error != cudaSuccess) {
    cudaGetLastError();
    return CudaError(error, "cudaHostAlloc");
  }
  return data;
}

void CudaFreeHost(void* data) { cudaFreeHost(data); }

absl::StatusOr<CudaStream> CurrentCudaStream(int device) {
  absl::Status used = UseDevice(device);
  if (!used.ok()) return used;
  std::vector<cudaStream_t>& streams = thread_streams.by_device;
  if (device >= static_cast<int>(streams.size())) {
    streams.resize(device + 1, nullptr);
  }
  if (streams[device] == nullptr) {
    absl::StatusOr<cudaStream_t> stream = Pool().Take(device);
    if (!stream.ok()) return stream.status();
    streams[device] = *stream;
  }
  return static_cast<CudaStream>(streams[device]);
}

absl::Status SynchronizeCudaStream(int device) {
  absl::StatusOr<CudaStream> stream = CurrentCudaStream(device);
  if (!stream.ok()) return stream.status();
  cudaError_t error = cudaStreamSynchronize(static_cast<cudaStream_t>(*stream));
  if (error != cudaSuccess) return CudaError(error, "cudaStreamSynchronize");
  return absl::OkStatus();
}

absl::Status CudaCopy(int device, void* dst, const void* src, size_t bytes,
                      bool wait) {
  absl::StatusOr<CudaStream> stream = CurrentCudaStream(device);
  if (!stream.ok()) return stream.status();
  cudaStream_t s = static_cast<cudaStream_t>(*stream);
  cudaError_t error = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s);
  if (error != cudaSuccess) return CudaError(error, "cudaMemcpyAsync");
  if (wait || IsHostMemory(dst)) {
    error = cudaStreamSynchronize(s);
    if (error != cudaSuccess) return CudaError(error, "cudaStreamSynchronize");
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t*> DeviceCheckSlot(int device, std::string what,
                                         bool with_value) {
  absl::Status used = UseDevice(device);
  if (!used.ok()) return used;
  auto& checks = thread_streams.checks;
  if (device >= static_cast<int>(checks.size())) checks.resize(device + 1);
  if (checks[device] == nullptr)
    checks[device] = std::make_unique<DeviceChecks>();
  return checks[device]->Slot(std::move(what), with_value);
}

absl::Status TakeDeviceCheckFailure(int device) {
  auto& checks = thread_streams.checks;
  if (device >= static_cast<int>(checks.size()) || checks[device] == nullptr) {
    return absl::OkStatus();
  }
  return checks[device]->TakeFailure();
}

absl::Status DiscardDeviceChecks(int device) {
  auto& checks = thread_streams.checks;
  if (device >= static_cast<int>(checks.size()) || checks[device] == nullptr ||
      checks[device]->empty()) {
    return absl::OkStatus();
  }
  absl::Status done = SynchronizeCudaStream(device);
  checks[device]->TakeFailure().IgnoreError();
  return done;
}

bool IsPageLockedHostMemory(const void* data) {
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, data) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

}  // namespace scopeflow
