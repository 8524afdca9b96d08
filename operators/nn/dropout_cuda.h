// Launchers of the dropout kernels (dropout_cuda.cu) on a CUDA stream.
// Plain C++ and CUDA runtime types only, so both nvcc and the C++ compiler
// read it.
#ifndef SCOPEFLOW_OPERATORS_NN_DROPOUT_CUDA_H_
#define SCOPEFLOW_OPERATORS_NN_DROPOUT_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace scopeflow {
namespace cuda {

// out[i] = x[i] * scale for i < n.
template <typename T>
void LaunchDropoutScale(const T* x, T scale, T* out, int64_t n,
                        cudaStream_t stream);

// out[i] = mask[i] != 0 ? x[i] * scale : 0 for i < n (dropout's training
// forward, and its gradient).
template <typename T>
void LaunchDropoutMasked(const T* x, const uint8_t* mask, T scale, T* out,
                         int64_t n, cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_DROPOUT_CUDA_H_
