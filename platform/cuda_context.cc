#include "platform/cuda_context.h"

#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_format.h"
#include "platform/cuda_runtime.h"
#include "platform/device.h"
#include "platform/mutex.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// Contexts of threads that exited, per device.
class ContextPool {
 public:
  std::unique_ptr<CudaContext> Take(int device) {
    MutexLock lock(&mu_);
    if (device >= static_cast<int>(free_.size()) || free_[device].empty()) {
      return nullptr;
    }
    std::unique_ptr<CudaContext> context = std::move(free_[device].back());
    free_[device].pop_back();
    return context;
  }

  void Give(std::unique_ptr<CudaContext> context) {
    MutexLock lock(&mu_);
    const int device = context->device();
    if (device >= static_cast<int>(free_.size())) free_.resize(device + 1);
    free_[device].push_back(std::move(context));
  }

 private:
  Mutex mu_;
  std::vector<std::vector<std::unique_ptr<CudaContext>>> free_
      ABSL_GUARDED_BY(mu_);
};

// Never destroyed: at exit the CUDA runtime may already be shut down, and
// destroying handles then fails or crashes.
ContextPool& Pool() {
  static ContextPool& pool = *std::make_unique<ContextPool>().release();
  return pool;
}

struct ThreadContexts {
  std::vector<std::unique_ptr<CudaContext>> by_device;
  ~ThreadContexts() {
    for (std::unique_ptr<CudaContext>& context : by_device) {
      if (context != nullptr) Pool().Give(std::move(context));
    }
  }
};

thread_local ThreadContexts thread_contexts;

absl::StatusOr<std::unique_ptr<CudaContext>> MakeContext(int device,
                                                         cudaStream_t stream) {
  cublasHandle_t cublas = nullptr;
  SF_RETURN_IF_ERROR(CublasCheck(cublasCreate(&cublas), "cublasCreate"));
  cudnnHandle_t cudnn = nullptr;
  absl::Status made = CudnnCheck(cudnnCreate(&cudnn), "cudnnCreate");
  if (!made.ok()) {
    cublasDestroy(cublas);
    return made;
  }
  auto context = std::make_unique<CudaContext>(device, stream, cublas, cudnn);
  SF_RETURN_IF_ERROR(context->BindStream(stream));
  return context;
}

}  // namespace

CudaContext::CudaContext(int device, cudaStream_t stream, cublasHandle_t cublas,
                         cudnnHandle_t cudnn)
    : device_(device), stream_(stream), cublas_(cublas), cudnn_(cudnn) {}

CudaContext::~CudaContext() {
  cudnnDestroy(cudnn_);
  cublasDestroy(cublas_);
}

absl::Status CudaContext::BindStream(cudaStream_t stream) {
  stream_ = stream;
  SF_RETURN_IF_ERROR(
      CublasCheck(cublasSetStream(cublas_, stream), "cublasSetStream"));
  // Results match the CPU's float32 arithmetic: no TF32 products unless a
  // kernel asks for them.
  SF_RETURN_IF_ERROR(CublasCheck(
      cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode"));
  return CudnnCheck(cudnnSetStream(cudnn_, stream), "cudnnSetStream");
}

absl::StatusOr<void*> CudaContext::Workspace(size_t bytes) {
  if (bytes == 0) return nullptr;
  if (workspace_ == nullptr || workspace_->size() < bytes) {
    workspace_.reset();
    SF_ASSIGN_OR_RETURN(Allocator * allocator, GetAllocator(place()));
    SF_ASSIGN_OR_RETURN(workspace_, allocator->Allocate(bytes));
  }
  return workspace_->data();
}

absl::StatusOr<CudaContext*> GetCudaContext(const Place& place) {
  const int device = place.device();
  std::vector<std::unique_ptr<CudaContext>>& contexts =
      thread_contexts.by_device;
  if (device < static_cast<int>(contexts.size()) &&
      contexts[device] != nullptr) {
    return contexts[device].get();
  }
  SF_CHECK_CODE(place.is_cuda(), absl::StatusCode::kInternal,
                "a CUDA context was asked for place %s", place.ToString());
  SF_RETURN_IF_ERROR(CheckPlaceAvailable(place));
  SF_ASSIGN_OR_RETURN(CudaStream stream, CurrentCudaStream(device));
  cudaStream_t cuda_stream = static_cast<cudaStream_t>(stream);
  std::unique_ptr<CudaContext> context = Pool().Take(device);
  if (context != nullptr) {
    SF_RETURN_IF_ERROR(context->BindStream(cuda_stream));
  } else {
    SF_ASSIGN_OR_RETURN(context, MakeContext(device, cuda_stream));
  }
  if (device >= static_cast<int>(contexts.size())) {
    contexts.resize(device + 1);
  }
  contexts[device] = std::move(context);
  return contexts[device].get();
}

absl::Status CudaCheck(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return absl::OkStatus();
  const std::string message =
      absl::StrFormat("%s failed: %s (%s)", what, cudaGetErrorString(error),
                      cudaGetErrorName(error));
  if (error == cudaErrorMemoryAllocation) {
    return absl::ResourceExhaustedError(message);
  }
  return absl::InternalError(message);
}

absl::Status CublasCheck(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const std::string message =
      absl::StrFormat("%s failed: %s (%s)", what, cublasGetStatusString(status),
                      cublasGetStatusName(status));
  if (status == CUBLAS_STATUS_ALLOC_FAILED) {
    return absl::ResourceExhaustedError(message);
  }
  return absl::InternalError(message);
}

absl::Status CudnnCheck(cudnnStatus_t status, const char* what) {
  if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  const std::string message =
      absl::StrFormat("%s failed: %s", what, cudnnGetErrorString(status));
  if (status == CUDNN_STATUS_ALLOC_FAILED) {
    return absl::ResourceExhaustedError(message);
  }
  return absl::InternalError(message);
}

absl::Status CudaLaunchCheck(const char* kernel) {
  return CudaCheck(cudaGetLastError(), kernel);
}

}  // namespace scopeflow
