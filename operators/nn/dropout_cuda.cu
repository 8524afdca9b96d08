#include <cstdint>

#include "operators/nn/dropout_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

template <typename T>
__global__ void ScaleKernel(const T* x, T scale, T* out, int64_t n) {
  SF_CUDA_GRID_LOOP(i, n) { out[i] = x[i] * scale; }
}

// A dropped element is 0 even where x is NaN or infinite, as on the CPU.
template <typename T>
__global__ void MaskedKernel(const T* x, const uint8_t* mask, T scale, T* out,
                             int64_t n) {
  SF_CUDA_GRID_LOOP(i, n) { out[i] = mask[i] != 0 ? x[i] * scale : T(0); }
}

}  // namespace

template <typename T>
void LaunchDropoutScale(const T* x, T scale, T* out, int64_t n,
                        cudaStream_t stream) {
  if (n == 0) return;
  ScaleKernel<T><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(x, scale, out, n);
}

template <typename T>
void LaunchDropoutMasked(const T* x, const uint8_t* mask, T scale, T* out,
                         int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  MaskedKernel<T>
      <<<CudaBlocks(n), kCudaThreads, 0, stream>>>(x, mask, scale, out, n);
}

template void LaunchDropoutScale<float>(const float*, float, float*, int64_t,
                                        cudaStream_t);
template void LaunchDropoutScale<double>(const double*, double, double*,
                                         int64_t, cudaStream_t);
template void LaunchDropoutMasked<float>(const float*, const uint8_t*, float,
                                         float*, int64_t, cudaStream_t);
template void LaunchDropoutMasked<double>(const double*, const uint8_t*, double,
                                          double*, int64_t, cudaStream_t);

}  // namespace cuda
}  // namespace scopeflow
