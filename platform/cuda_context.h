// What CUDA kernels need on one device: the calling thread's stream, cuBLAS
// and cuDNN handles bound to it, and scratch memory. Only in builds with
// CUDA (see third_party/cuda/cuda.bzl).
#ifndef SCOPEFLOW_PLATFORM_CUDA_CONTEXT_H_
#define SCOPEFLOW_PLATFORM_CUDA_CONTEXT_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "platform/allocator.h"
#include "platform/place.h"

namespace scopeflow {

// One per thread and device: kernels of one thread are queued in order on
// its stream, and the handles, which cuDNN does not allow two threads to
// use at once, are never shared. Contexts of threads that exited go to
// threads that come later.
class CudaContext {
 public:
  CudaContext(int device, cudaStream_t stream, cublasHandle_t cublas,
              cudnnHandle_t cudnn);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  int device() const { return device_; }
  Place place() const { return CUDAPlace(device_); }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  cudnnHandle_t cudnn() const { return cudnn_; }

  // Device memory of at least `bytes` for one kernel call: valid until the
  // next call of Workspace on this context. Kernels of this context run in
  // stream order, so one call's use ends before the next call's begins.
  absl::StatusOr<void*> Workspace(size_t bytes);

  // Rebinds the handles to `stream` (a context handed to another thread
  // takes that thread's stream).
  absl::Status BindStream(cudaStream_t stream);

 private:
  int device_;
  cudaStream_t stream_;
  cublasHandle_t cublas_;
  cudnnHandle_t cudnn_;
  std::shared_ptr<Allocation> workspace_;
};

// The calling thread's context for `place`, a CUDA place that exists here.
absl::StatusOr<CudaContext*> GetCudaContext(const Place& place);

// OK, or an Internal error (ResourceExhausted for out of memory) naming
// `what` and the library's message.
absl::Status CudaCheck(cudaError_t error, const char* what);
absl::Status CublasCheck(cublasStatus_t status, const char* what);
absl::Status CudnnCheck(cudnnStatus_t status, const char* what);

// After a kernel launch: the launch's error, if any, naming `kernel`.
absl::Status CudaLaunchCheck(const char* kernel);

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_CUDA_CONTEXT_H_
