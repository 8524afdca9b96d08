// Launchers of the batch_norm kernels (batch_norm_cuda.cu) on a CUDA
// stream. Plain C++ and CUDA runtime types only, so both nvcc and the C++
// compiler read it.
#ifndef SCOPEFLOW_OPERATORS_NN_BATCH_NORM_CUDA_H_
#define SCOPEFLOW_OPERATORS_NN_BATCH_NORM_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace scopeflow {
namespace cuda {

// X seen as [batch, channels, inner].
struct BatchNormShape {
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t inner = 0;
};

// batch_norm's tensors; the optional outputs are null where not bound.
template <typename T>
struct BatchNormTensors {
  const T* x = nullptr;
  const T* scale = nullptr;
  const T* bias = nullptr;
  const T* mean = nullptr;
  const T* variance = nullptr;
  T* y = nullptr;
  T* mean_out = nullptr;
  T* variance_out = nullptr;
  T* saved_mean = nullptr;
  T* saved_variance = nullptr;
};

// batch_norm_grad's tensors. `mean` and `variance` are Mean and Variance
// in inference mode, SavedMean and SavedVariance (an inverse standard
// deviation) in training mode. The outputs are null where not bound.
template <typename T>
struct BatchNormGradTensors {
  const T* x = nullptr;
  const T* scale = nullptr;
  const T* y_grad = nullptr;
  const T* mean = nullptr;
  const T* variance = nullptr;
  T* x_grad = nullptr;
  T* scale_grad = nullptr;
  T* bias_grad = nullptr;
};

// Device scratch memory every launcher below needs for `shape`.
size_t BatchNormWorkspaceBytes(const BatchNormShape& shape);

// Normalizes with the running statistics Mean and Variance.
template <typename T>
void LaunchBatchNormInference(const BatchNormShape& shape, double epsilon,
                              const BatchNormTensors<T>& t, void* workspace,
                              cudaStream_t stream);

// Normalizes with the batch's statistics and updates the running ones.
// Needs batch * inner > 0.
template <typename T>
void LaunchBatchNormTraining(const BatchNormShape& shape, double epsilon,
                             double momentum, const BatchNormTensors<T>& t,
                             void* workspace, cudaStream_t stream);

template <typename T>
void LaunchBatchNormGrad(const BatchNormShape& shape, bool is_test,
                         double epsilon, const BatchNormGradTensors<T>& t,
                         void* workspace, cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_BATCH_NORM_CUDA_H_
