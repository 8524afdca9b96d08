#include <cstdint>

#include "operators/creation_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

// kWidth copies of the value, stored as one 16-byte access.
template <typename T, int kWidth>
struct alignas(sizeof(T) * kWidth) Pack {
  T v[kWidth];
};

template <typename T, int kWidth>
__global__ void FillKernel(T* out, int64_t packs, T value) {
  using P = Pack<T, kWidth>;
  P pack;
#pragma unroll
  for (int w = 0; w < kWidth; ++w) pack.v[w] = value;
  SF_CUDA_GRID_LOOP(i, packs) { reinterpret_cast<P*>(out)[i] = pack; }
}

}  // namespace

template <typename T>
void LaunchFillConstant(T* out, int64_t n, T value, cudaStream_t stream) {
  if (n == 0) return;
  constexpr int kWidth = sizeof(T) >= 16 ? 1 : 16 / sizeof(T);
  // Packs over the front when it is aligned for them, one by one after.
  const int64_t packs =
      reinterpret_cast<uintptr_t>(out) % 16 == 0 ? n / kWidth : 0;
  if (packs > 0) {
    FillKernel<T, kWidth>
        <<<CudaBlocks(packs), kCudaThreads, 0, stream>>>(out, packs, value);
  }
  const int64_t rest = n - packs * kWidth;
  if (rest > 0) {
    FillKernel<T, 1><<<CudaBlocks(rest), kCudaThreads, 0, stream>>>(
        out + packs * kWidth, rest, value);
  }
}

template void LaunchFillConstant<float>(float*, int64_t, float, cudaStream_t);
template void LaunchFillConstant<double>(double*, int64_t, double,
                                         cudaStream_t);
template void LaunchFillConstant<int32_t>(int32_t*, int64_t, int32_t,
                                          cudaStream_t);
template void LaunchFillConstant<int64_t>(int64_t*, int64_t, int64_t,
                                          cudaStream_t);
template void LaunchFillConstant<bool>(bool*, int64_t, bool, cudaStream_t);

}  // namespace cuda
}  // namespace scopeflow
