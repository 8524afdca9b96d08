// Launchers of the layer_norm kernels (layer_norm_cuda.cu) on a CUDA
// stream. X is seen as [rows, normalized]. Plain C++ and CUDA runtime types
// only, so both nvcc and the C++ compiler read it.
#ifndef SCOPEFLOW_OPERATORS_NN_LAYER_NORM_CUDA_H_
#define SCOPEFLOW_OPERATORS_NN_LAYER_NORM_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace scopeflow {
namespace cuda {

// layer_norm's tensors; null where a slot is not bound.
template <typename T>
struct LayerNormTensors {
  const T* x = nullptr;
  const T* scale = nullptr;
  const T* bias = nullptr;
  T* y = nullptr;
  T* mean = nullptr;
  T* inv_std = nullptr;
};

// layer_norm_grad's tensors; null where a slot is not bound.
template <typename T>
struct LayerNormGradTensors {
  const T* x = nullptr;
  const T* scale = nullptr;
  const T* y_grad = nullptr;
  const T* mean_grad = nullptr;
  const T* inv_std_grad = nullptr;
  T* x_grad = nullptr;
  T* scale_grad = nullptr;
  T* bias_grad = nullptr;
};

template <typename T>
void LaunchLayerNorm(int64_t rows, int64_t normalized, double epsilon,
                     const LayerNormTensors<T>& t, cudaStream_t stream);

// Device scratch memory LaunchLayerNormGrad needs.
size_t LayerNormGradWorkspaceBytes(int64_t rows, int64_t normalized);

template <typename T>
void LaunchLayerNormGrad(int64_t rows, int64_t normalized, double epsilon,
                         const LayerNormGradTensors<T>& t, void* workspace,
                         cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_LAYER_NORM_CUDA_H_
