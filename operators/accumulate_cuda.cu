#include <cstdint>

#include "operators/accumulate_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

// Inputs one launch adds, passed by value; more take further launches that
// add into the output.
constexpr int kInputsPerLaunch = 8;

template <typename T>
struct Inputs {
  const T* data[kInputsPerLaunch];
  int count;
};

// kWidth consecutive elements, loaded and stored as one 16-byte access.
template <typename T, int kWidth>
struct alignas(sizeof(T) * kWidth) Pack {
  T v[kWidth];
};

// Thread i adds elements [i * kWidth, (i + 1) * kWidth) of every input;
// `accumulate` starts from out's own elements (a launch after the first).
template <typename T, int kWidth>
__global__ void SumKernel(Inputs<T> in, T* out, int64_t packs,
                          bool accumulate) {
  using P = Pack<T, kWidth>;
  SF_CUDA_GRID_LOOP(i, packs) {
    P sum = accumulate ? reinterpret_cast<const P*>(out)[i]
                       : reinterpret_cast<const P*>(in.data[0])[i];
    for (int k = accumulate ? 0 : 1; k < in.count; ++k) {
      const P p = reinterpret_cast<const P*>(in.data[k])[i];
#pragma unroll
      for (int w = 0; w < kWidth; ++w) sum.v[w] += p.v[w];
    }
    reinterpret_cast<P*>(out)[i] = sum;
  }
}

template <typename T, int kWidth>
void SumPacks(const Inputs<T>& in, T* out, int64_t packs, bool accumulate,
              cudaStream_t stream) {
  if (packs == 0) return;
  SumKernel<T, kWidth><<<CudaBlocks(packs), kCudaThreads, 0, stream>>>(
      in, out, packs, accumulate);
}

}  // namespace

template <typename T>
void LaunchSum(const T* const* inputs, int count, T* out, int64_t n,
               cudaStream_t stream) {
  if (n == 0) return;
  constexpr int kWidth = 16 / sizeof(T);
  bool aligned = reinterpret_cast<uintptr_t>(out) % 16 == 0;
  for (int k = 0; k < count; ++k) {
    aligned = aligned && reinterpret_cast<uintptr_t>(inputs[k]) % 16 == 0;
  }
  // Packs over the aligned front, single elements over the tail.
  const int64_t packs = aligned ? n / kWidth : 0;
  const int64_t head = packs * kWidth;
  for (int first = 0; first < count; first += kInputsPerLaunch) {
    Inputs<T> in{};
    in.count =
        count - first < kInputsPerLaunch ? count - first : kInputsPerLaunch;
    Inputs<T> tail = in;
    for (int k = 0; k < in.count; ++k) {
      in.data[k] = inputs[first + k];
      tail.data[k] = inputs[first + k] + head;
    }
    const bool accumulate = first > 0;
    SumPacks<T, kWidth>(in, out, packs, accumulate, stream);
    SumPacks<T, 1>(tail, out + head, n - head, accumulate, stream);
  }
}

template void LaunchSum<float>(const float* const*, int, float*, int64_t,
                               cudaStream_t);
template void LaunchSum<double>(const double* const*, int, double*, int64_t,
                                cudaStream_t);
template void LaunchSum<int32_t>(const int32_t* const*, int, int32_t*, int64_t,
                                 cudaStream_t);
template void LaunchSum<int64_t>(const int64_t* const*, int, int64_t*, int64_t,
                                 cudaStream_t);

}  // namespace cuda
}  // namespace scopeflow
