// Launcher of the fill kernel of the creation ops (creation_cuda.cu).
// Plain C++ and CUDA runtime types only, so both nvcc and the C++ compiler
// read it.
#ifndef SCOPEFLOW_OPERATORS_CREATION_CUDA_H_
#define SCOPEFLOW_OPERATORS_CREATION_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace scopeflow {
namespace cuda {

// out[i] = value for i < n.
template <typename T>
void LaunchFillConstant(T* out, int64_t n, T value, cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_CREATION_CUDA_H_
