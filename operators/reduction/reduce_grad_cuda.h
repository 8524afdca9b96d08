// Launchers of the gradient kernels of the reductions (reduce_grad_cuda.cu)
// on a CUDA stream. Plain C++ and CUDA runtime types only, so both nvcc and
// the C++ compiler read it.
#ifndef SCOPEFLOW_OPERATORS_REDUCTION_REDUCE_GRAD_CUDA_H_
#define SCOPEFLOW_OPERATORS_REDUCTION_REDUCE_GRAD_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "operators/reduction/reduce_cuda.h"

namespace scopeflow {
namespace cuda {

// The most runs (ReduceRuns) the gradient kernels map elements through.
inline constexpr int kMaxGradRuns = 16;

// dx[i] = scale * g[o] for every element i of the input of `runs` (at most
// kMaxGradRuns of them; none is one element), o being its output's index.
template <typename T>
void LaunchReduceSpread(const ReduceRuns& runs, const T* g, T scale, T* dx,
                        cudaStream_t stream);

// The workspace of LaunchReduceMaxGrad for `outputs` outputs.
size_t ReduceMaxGradWorkspaceBytes(int64_t outputs);

// reduce_max_grad: dx = 0 but at each output's first element (in x's
// order) equal to max[o] (NaN matching NaN), which gets g[o]. x has the
// shape of `runs`, max and g `outputs` elements.
template <typename T>
cudaError_t LaunchReduceMaxGrad(const ReduceRuns& runs, const T* x,
                                const T* max, const T* g, T* dx,
                                int64_t outputs, void* workspace,
                                cudaStream_t stream);

// mean_grad: dx[i] = g[0] / n for i < n, divided in double.
template <typename T>
void LaunchMeanGrad(const T* g, T* dx, int64_t n, cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_REDUCTION_REDUCE_GRAD_CUDA_H_
