// Launchers of the helper kernels of the CUDA matrix products
// (matmul_cuda.cu): the products themselves run in cuBLAS. Plain C++ and
// CUDA runtime types only, so both nvcc and the C++ compiler read it.
#ifndef SCOPEFLOW_OPERATORS_MATMUL_CUDA_H_
#define SCOPEFLOW_OPERATORS_MATMUL_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace scopeflow {
namespace cuda {

// Batch dims of matmul: operands have rank 8 at most, so 6 batch dims.
inline constexpr int kMaxBatchLoopDims = 6;

// The matrices of a batched product, one per index of a row-major loop over
// `sizes`: operand j's matrix of loop index (i_0, ..., i_{rank-1}) starts
// sum_d i_d * strides[j][d] elements past its base (j: 0 = A, 1 = B,
// 2 = C). A stride of 0 repeats one matrix along a broadcast dim.
struct BatchLoop {
  int rank = 0;
  int64_t sizes[kMaxBatchLoopDims] = {};
  int64_t strides[3][kMaxBatchLoopDims] = {};
};

// For t < count, the matrices of loop item first + t (items counted
// row-major over loop.sizes): a_ptrs[t] and b_ptrs[t] from the strides,
// c_ptrs[t] = c + t * c_item_stride where c_item_stride > 0 (results
// packed in item order), otherwise from the strides too.
template <typename T>
void LaunchBatchPointers(const BatchLoop& loop, int64_t first, int64_t count,
                         const T* a, const T* b, T* c, int64_t c_item_stride,
                         const T** a_ptrs, const T** b_ptrs, T** c_ptrs,
                         cudaStream_t stream);

// fc's finish, in place over `rows` rows of n values: out[i * n + j] +=
// bias[j] where bias is not null, then the relu where `relu` is set (relu's
// own expression, so NaN stays NaN).
template <typename T>
void LaunchFinishRows(const T* bias, int64_t rows, int64_t n, bool relu, T* out,
                      cudaStream_t stream);

// out[i] = value for i < n.
template <typename T>
void LaunchFill(T value, int64_t n, T* out, cudaStream_t stream);

// dst[i] = (accumulate ? dst[i] : 0) + sum over t < terms of src[t * n + i],
// for i < n: folds `terms` packed partial results into one.
template <typename T>
void LaunchSumTerms(const T* src, int64_t terms, int64_t n, bool accumulate,
                    T* dst, cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_MATMUL_CUDA_H_
