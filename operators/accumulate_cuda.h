// Launcher of the CUDA kernel of sum (accumulate_cuda.cu). Plain C++ and
// CUDA runtime types only, so both nvcc and the C++ compiler read it.
#ifndef SCOPEFLOW_OPERATORS_ACCUMULATE_CUDA_H_
#define SCOPEFLOW_OPERATORS_ACCUMULATE_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace scopeflow {
namespace cuda {

// out[j] = ((inputs[0][j] + inputs[1][j]) + ...) + inputs[count - 1][j] for
// j < n, adding in input order as the CPU kernel does. `inputs` is a host
// array of `count` >= 1 device pointers.
template <typename T>
void LaunchSum(const T* const* inputs, int count, T* out, int64_t n,
               cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ACCUMULATE_CUDA_H_
