// accuracy's count, softmax_with_cross_entropy's label check and its
// gradient, with the semantics of classification.cc.
#include <cmath>
#include <cstdint>

#include "operators/reduction/classification_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

constexpr int kCountThreads = 1024;

__device__ inline float Mul(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double Mul(double a, double b) { return __dmul_rn(a, b); }

// One block: the rows are one per example of a batch, few enough for one
// pass of a block over them.
__global__ void __launch_bounds__(kCountThreads)
    AccuracyKernel(const int64_t* predicted, const int64_t* labels, int64_t n,
                   float* accuracy) {
  __shared__ unsigned long long warp_counts[kCountThreads / 32];
  unsigned long long count = 0;
  for (int64_t r = threadIdx.x; r < n; r += blockDim.x) {
    count += predicted[r] == labels[r] ? 1 : 0;
  }
  for (int mask = 16; mask > 0; mask /= 2) {
    count += __shfl_xor_sync(0xffffffffu, count, mask);
  }
  if (threadIdx.x % 32 == 0) warp_counts[threadIdx.x / 32] = count;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long total = 0;
    for (int w = 0; w < kCountThreads / 32; ++w) total += warp_counts[w];
    *accuracy = n == 0 ? 0.0f
                       : static_cast<float>(static_cast<double>(total) /
                                            static_cast<double>(n));
  }
}

// Writes `value` into a device check slot (DeviceCheckSlot in
// platform/cuda_runtime.h). INT64_MIN means "no failure" there, so that one
// value is reported as INT64_MIN + 1 rather than lost.
__device__ inline void ReportBad(int64_t* bad, int64_t value) {
  *bad = value == INT64_MIN ? INT64_MIN + 1 : value;
}

__global__ void CheckLabelsKernel(const int64_t* labels, int64_t rows,
                                  int64_t classes, int64_t* bad) {
  SF_CUDA_GRID_LOOP(r, rows) {
    const int64_t label = labels[r];
    if (label < 0 || label >= classes) ReportBad(bad, label);
  }
}

// (y * g[r]) - g[r] at the label, subtracted after the product as the CPU
// kernel does.
template <typename T, typename Index>
__global__ void SoftmaxCrossEntropyGradKernel(const T* y, const int64_t* labels,
                                              const T* g, T* dx, Index classes,
                                              Index n, int64_t* bad) {
  for (Index e = Index{blockIdx.x} * blockDim.x + threadIdx.x; e < n;
       e += Index{blockDim.x} * gridDim.x) {
    const Index r = e / classes;
    const int64_t c = static_cast<int64_t>(e - r * classes);
    const int64_t label = labels[r];
    const T scale = g[r];
    const T scaled = Mul(y[e], scale);
    if (label < 0 || label >= static_cast<int64_t>(classes)) {
      dx[e] = T(NAN);
      // The row's first element reports it: fewer writes to host memory.
      if (c == 0) ReportBad(bad, label);
    } else {
      dx[e] = c == label ? scaled - scale : scaled;
    }
  }
}

}  // namespace

void LaunchAccuracy(const int64_t* predicted, const int64_t* labels, int64_t n,
                    float* accuracy, cudaStream_t stream) {
  AccuracyKernel<<<1, kCountThreads, 0, stream>>>(predicted, labels, n,
                                                  accuracy);
}

void LaunchCheckLabels(const int64_t* labels, int64_t rows, int64_t classes,
                       int64_t* bad, cudaStream_t stream) {
  if (rows == 0) return;
  CheckLabelsKernel<<<CudaBlocks(rows), kCudaThreads, 0, stream>>>(
      labels, rows, classes, bad);
}

template <typename T>
void LaunchSoftmaxCrossEntropyGrad(const T* softmax, const int64_t* labels,
                                   const T* g, T* dx, int64_t rows,
                                   int64_t classes, int64_t* bad,
                                   cudaStream_t stream) {
  const int64_t n = rows * classes;
  if (n == 0) return;
  // 32-bit indices where n and the grid-stride steps past it fit.
  if (n <= INT32_MAX) {
    SoftmaxCrossEntropyGradKernel<T, uint32_t>
        <<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
            softmax, labels, g, dx, static_cast<uint32_t>(classes),
            static_cast<uint32_t>(n), bad);
  } else {
    SoftmaxCrossEntropyGradKernel<T, uint64_t>
        <<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
            softmax, labels, g, dx, static_cast<uint64_t>(classes),
            static_cast<uint64_t>(n), bad);
  }
}

template void LaunchSoftmaxCrossEntropyGrad<float>(const float*, const int64_t*,
                                                   const float*, float*,
                                                   int64_t, int64_t, int64_t*,
                                                   cudaStream_t);
template void LaunchSoftmaxCrossEntropyGrad<double>(const double*,
                                                    const int64_t*,
                                                    const double*, double*,
                                                    int64_t, int64_t, int64_t*,
                                                    cudaStream_t);

}  // namespace cuda
}  // namespace scopeflow
