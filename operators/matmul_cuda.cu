#include "operators/matmul_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

template <typename T>
__global__ void BatchPointersKernel(BatchLoop loop, int64_t first,
                                    int64_t count, const T* a, const T* b, T* c,
                                    int64_t c_item_stride, const T** a_ptrs,
                                    const T** b_ptrs, T** c_ptrs) {
  SF_CUDA_GRID_LOOP(t, count) {
    int64_t item = first + t;
    int64_t offsets[3] = {0, 0, 0};
#pragma unroll
    for (int d = kMaxBatchLoopDims - 1; d >= 0; --d) {
      if (d >= loop.rank) continue;
      const int64_t index = item % loop.sizes[d];
      item /= loop.sizes[d];
#pragma unroll
      for (int j = 0; j < 3; ++j) offsets[j] += index * loop.strides[j][d];
    }
    a_ptrs[t] = a + offsets[0];
    b_ptrs[t] = b + offsets[1];
    c_ptrs[t] = c + (c_item_stride > 0 ? t * c_item_stride : offsets[2]);
  }
}

// Each thread keeps its column and moves it on by `step_mod` (the grid's
// stride modulo n) instead of dividing every index by n.
template <typename T, bool kBias, bool kRelu>
__global__ void FinishRowsKernel(const T* bias, int64_t total, int64_t n,
                                 int64_t step_mod, T* out) {
  const int64_t start = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  int64_t column = start % n;
  SF_CUDA_GRID_LOOP(i, total) {
    T v = out[i];
    if (kBias) v += bias[column];
    if (kRelu) v = v < T(0) ? T(0) : v;
    out[i] = v;
    column += step_mod;
    if (column >= n) column -= n;
  }
}

template <typename T>
__global__ void FillKernel(T value, int64_t n, T* out) {
  SF_CUDA_GRID_LOOP(i, n) { out[i] = value; }
}

template <typename T>
__global__ void SumTermsKernel(const T* src, int64_t terms, int64_t n,
                               bool accumulate, T* dst) {
  SF_CUDA_GRID_LOOP(i, n) {
    T sum = accumulate ? dst[i] : T(0);
    for (int64_t t = 0; t < terms; ++t) sum += src[t * n + i];
    dst[i] = sum;
  }
}

}  // namespace

template <typename T>
void LaunchBatchPointers(const BatchLoop& loop, int64_t first, int64_t count,
                         const T* a, const T* b, T* c, int64_t c_item_stride,
                         const T** a_ptrs, const T** b_ptrs, T** c_ptrs,
                         cudaStream_t stream) {
  if (count == 0) return;
  BatchPointersKernel<T><<<CudaBlocks(count), kCudaThreads, 0, stream>>>(
      loop, first, count, a, b, c, c_item_stride, a_ptrs, b_ptrs, c_ptrs);
}

template <typename T>
void LaunchFinishRows(const T* bias, int64_t rows, int64_t n, bool relu, T* out,
                      cudaStream_t stream) {
  const int64_t total = rows * n;
  if (total == 0 || (bias == nullptr && !relu)) return;
  const unsigned blocks = CudaBlocks(total);
  const int64_t step_mod = int64_t{blocks} * kCudaThreads % n;
  if (bias != nullptr && relu) {
    FinishRowsKernel<T, true, true>
        <<<blocks, kCudaThreads, 0, stream>>>(bias, total, n, step_mod, out);
  } else if (bias != nullptr) {
    FinishRowsKernel<T, true, false>
        <<<blocks, kCudaThreads, 0, stream>>>(bias, total, n, step_mod, out);
  } else {
    FinishRowsKernel<T, false, true>
        <<<blocks, kCudaThreads, 0, stream>>>(bias, total, n, step_mod, out);
  }
}

template <typename T>
void LaunchFill(T value, int64_t n, T* out, cudaStream_t stream) {
  if (n == 0) return;
  FillKernel<T><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(value, n, out);
}

template <typename T>
void LaunchSumTerms(const T* src, int64_t terms, int64_t n, bool accumulate,
                    T* dst, cudaStream_t stream) {
  if (n == 0) return;
  SumTermsKernel<T><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
      src, terms, n, accumulate, dst);
}

#define SF_INSTANTIATE_MATMUL_CUDA(T)                                      \
  template void LaunchBatchPointers<T>(                                    \
      const BatchLoop&, int64_t, int64_t, const T*, const T*, T*, int64_t, \
      const T**, const T**, T**, cudaStream_t);                            \
  template void LaunchFinishRows<T>(const T*, int64_t, int64_t, bool, T*,  \
                                    cudaStream_t);                         \
  template void LaunchFill<T>(T, int64_t, T*, cudaStream_t);               \
  template void LaunchSumTerms<T>(const T*, int64_t, int64_t, bool, T*,    \
                                  cudaStream_t);

SF_INSTANTIATE_MATMUL_CUDA(float)
SF_INSTANTIATE_MATMUL_CUDA(double)

#undef SF_INSTANTIATE_MATMUL_CUDA

}  // namespace cuda
}  // namespace scopeflow
