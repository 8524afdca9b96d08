// Kernels that compute where each element comes from: pad (and its
// gradient), gather (and its scatter-add gradient), and fills.
#include <cstdint>

#include "operators/shape/shape_kernels_cuda.h"
#include "operators/shape/word_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

// Writes `value` into a device check slot (DeviceCheckSlot in
// platform/cuda_runtime.h). INT64_MIN means "no failure" there, so that one
// value is reported as INT64_MIN + 1 rather than lost.
__device__ inline void ReportBad(int64_t* bad, int64_t value) {
  *bad = value == INT64_MIN ? INT64_MIN + 1 : value;
}

template <typename T>
__global__ void FillKernel(T* out, int64_t n, T value,
                           const T* value_on_device) {
  const T v = value_on_device != nullptr ? *value_on_device : value;
  SF_CUDA_GRID_LOOP(i, n) { out[i] = v; }
}

// Where output index `i` of a dim of X's `size` elements, padded by
// `before` ahead, takes its element from; -1 for the border in constant
// mode. As PadSource in slice_pad.cc.
__device__ int64_t PadSource(PadMode mode, int64_t i, int64_t before,
                             int64_t size) {
  int64_t j = i - before;
  switch (mode) {
    case PadMode::kConstant:
      return j >= 0 && j < size ? j : -1;
    case PadMode::kEdge:
      return j < 0 ? 0 : (j >= size ? size - 1 : j);
    case PadMode::kWrap:
      j %= size;
      return j < 0 ? j + size : j;
    case PadMode::kReflect:
      break;
  }
  // Reflection repeats with period 2 * (size - 1): up the dim, then down.
  if (size == 1) return 0;
  const int64_t period = 2 * (size - 1);
  j %= period;
  if (j < 0) j += period;
  return j < size ? j : period - j;
}

// The offset in X of output element `o`, or -1 for the border in constant
// mode.
__device__ int64_t PadSourceOffset(PadMode mode, const PadBox& box, int64_t o) {
  int64_t offset = 0, stride = 1;
  bool inside = true;
  for (int k = box.rank - 1; k >= 0; --k) {
    const int64_t q = o / box.out_dims[k];
    const int64_t j =
        PadSource(mode, o - q * box.out_dims[k], box.before[k], box.x_dims[k]);
    inside = inside && j >= 0;
    offset += j * stride;
    stride *= box.x_dims[k];
    o = q;
  }
  return inside ? offset : -1;
}

template <typename T>
__global__ void PadKernel(PadMode mode, PadBox box, const T* x, T* out,
                          int64_t n, T value, const T* value_on_device) {
  // The other modes never read the pad value.
  const T fill = mode == PadMode::kConstant && value_on_device != nullptr
                     ? *value_on_device
                     : value;
  SF_CUDA_GRID_LOOP(o, n) {
    const int64_t source = PadSourceOffset(mode, box, o);
    out[o] = source >= 0 ? x[source] : fill;
  }
}

__device__ void AtomicAdd(float* p, float v) { atomicAdd(p, v); }
__device__ void AtomicAdd(double* p, double v) { atomicAdd(p, v); }
__device__ void AtomicAdd(int32_t* p, int32_t v) { atomicAdd(p, v); }
__device__ void AtomicAdd(int64_t* p, int64_t v) {
  // Two's complement: the unsigned sum wraps as the signed one would.
  atomicAdd(reinterpret_cast<unsigned long long*>(p),  // NOLINT
            static_cast<unsigned long long>(v));       // NOLINT
}

template <typename T>
__global__ void PadGradScatterKernel(PadMode mode, PadBox box, const T* grad,
                                     T* x_grad, int64_t n) {
  SF_CUDA_GRID_LOOP(o, n) {
    AtomicAdd(x_grad + PadSourceOffset(mode, box, o), grad[o]);
  }
}

// As slice_pad.cc's BorderSum: floats add in double, integers in wrapping
// uint64.
template <typename T>
struct BorderAcc {
  using Type = double;
};
template <>
struct BorderAcc<int32_t> {
  using Type = unsigned long long;  // NOLINT: the type __shfl_* takes
};
template <>
struct BorderAcc<int64_t> {
  using Type = unsigned long long;  // NOLINT
};

// The sum over a block of kCudaThreads threads, in thread 0.
template <typename A>
__device__ A BlockSum(A v) {
  __shared__ A warps[kCudaThreads / 32];
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < kCudaThreads / 32 ? warps[threadIdx.x] : A(0);
  if (threadIdx.x < 32) {
#pragma unroll
    for (int offset = kCudaThreads / 64; offset > 0; offset /= 2) {
      v += __shfl_down_sync(0xffffffffu, v, offset);
    }
  }
  return v;
}

// First pass: block b sums its share of the border into partial[b].
template <typename T>
__global__ void BorderSumKernel(PadBox box, const T* grad, int64_t n,
                                typename BorderAcc<T>::Type* partial) {
  using A = typename BorderAcc<T>::Type;
  A sum = A(0);
  SF_CUDA_GRID_LOOP(o, n) {
    if (PadSourceOffset(PadMode::kConstant, box, o) < 0) {
      sum += static_cast<A>(grad[o]);
    }
  }
  sum = BlockSum(sum);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

// Second pass, one block: the partial sums in a fixed order.
template <typename T>
__global__ void BorderSumFinishKernel(
    const typename BorderAcc<T>::Type* partial, T* out) {
  using A = typename BorderAcc<T>::Type;
  A sum = A(0);
  for (int b = threadIdx.x; b < kBorderSumBlocks; b += blockDim.x) {
    sum += partial[b];
  }
  sum = BlockSum(sum);
  if (threadIdx.x == 0) *out = static_cast<T>(sum);
}

// Out [outer, count, inner] from X [outer, n, inner], in units of T.
template <typename T, typename I, typename Index>
__global__ void GatherKernel(const T* x, const I* index, T* out, Index n,
                             Index count, Index inner, Index total,
                             int64_t* bad) {
  for (Index e = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x;
       e < total; e += static_cast<Index>(blockDim.x) * gridDim.x) {
    const Index q = e / inner;
    const Index t = e - q * inner;
    const Index o = q / count;
    const Index j = q - o * count;
    const int64_t given = static_cast<int64_t>(index[j]);
    const int64_t i = given < 0 ? given + n : given;
    if (i >= 0 && i < n) {
      out[e] = x[(o * n + static_cast<Index>(i)) * inner + t];
    } else {
      out[e] = T{};
      // The first element of each row reports it: the host shows one value,
      // and fewer writes cross to host memory.
      if (t == 0) ReportBad(bad, given);
    }
  }
}

template <typename T, typename I, typename Index>
__global__ void GatherGradKernel(const T* grad, const I* index, T* x_grad,
                                 Index n, Index count, Index inner, Index total,
                                 int64_t* bad) {
  for (Index e = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x;
       e < total; e += static_cast<Index>(blockDim.x) * gridDim.x) {
    const Index q = e / inner;
    const Index t = e - q * inner;
    const Index o = q / count;
    const Index j = q - o * count;
    const int64_t given = static_cast<int64_t>(index[j]);
    const int64_t i = given < 0 ? given + n : given;
    if (i >= 0 && i < n) {
      AtomicAdd(x_grad + (o * n + static_cast<Index>(i)) * inner + t, grad[e]);
    } else if (t == 0) {
      ReportBad(bad, given);
    }
  }
}

template <typename I>
__global__ void CheckGatherIndicesKernel(const I* index, int64_t count,
                                         int64_t n, int64_t* bad) {
  SF_CUDA_GRID_LOOP(j, count) {
    const int64_t given = static_cast<int64_t>(index[j]);
    if (given < -n || given >= n) ReportBad(bad, given);
  }
}

// Whether indices into both [outer, n, inner] and [outer, count, inner]
// fit a 32-bit Index with room for the grid stride.
bool FitsInt32(int64_t outer, int64_t n, int64_t count, int64_t inner) {
  constexpr int64_t kLimit = int64_t{1} << 30;
  const int64_t rows = n > count ? n : count;
  return rows == 0 || inner == 0 || outer == 0 ||
         (inner <= kLimit && rows <= kLimit / inner &&
          outer <= kLimit / (rows * inner));
}

template <typename T, typename I>
void GatherWords(const void* x, const I* index, void* out, int64_t outer,
                 int64_t n, int64_t count, int64_t inner, int64_t* bad,
                 cudaStream_t stream) {
  const int64_t total = outer * count * inner;
  const T* src = static_cast<const T*>(x);
  T* dst = static_cast<T*>(out);
  if (FitsInt32(outer, n, count, inner)) {
    GatherKernel<T, I, int32_t><<<CudaBlocks(total), kCudaThreads, 0, stream>>>(
        src, index, dst, static_cast<int32_t>(n), static_cast<int32_t>(count),
        static_cast<int32_t>(inner), static_cast<int32_t>(total), bad);
  } else {
    GatherKernel<T, I, int64_t><<<CudaBlocks(total), kCudaThreads, 0, stream>>>(
        src, index, dst, n, count, inner, total, bad);
  }
}

}  // namespace

template <typename T>
void LaunchFill(T* out, int64_t n, T value, const T* value_on_device,
                cudaStream_t stream) {
  if (n == 0) return;
  FillKernel<T><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(out, n, value,
                                                            value_on_device);
}

template <typename T>
void LaunchPad(PadMode mode, const PadBox& box, const T* x, T* out, T value,
               const T* value_on_device, cudaStream_t stream) {
  int64_t n = 1;
  for (int k = 0; k < box.rank; ++k) n *= box.out_dims[k];
  if (n == 0) return;
  PadKernel<T><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
      mode, box, x, out, n, value, value_on_device);
}

template <typename T>
void LaunchPadGradScatter(PadMode mode, const PadBox& box, const T* grad,
                          T* x_grad, cudaStream_t stream) {
  int64_t n = 1;
  for (int k = 0; k < box.rank; ++k) n *= box.out_dims[k];
  if (n == 0) return;
  PadGradScatterKernel<T>
      <<<CudaBlocks(n), kCudaThreads, 0, stream>>>(mode, box, grad, x_grad, n);
}

template <typename T>
void LaunchBorderSum(const PadBox& box, const T* grad, T* out, void* workspace,
                     cudaStream_t stream) {
  using A = typename BorderAcc<T>::Type;
  int64_t n = 1;
  for (int k = 0; k < box.rank; ++k) n *= box.out_dims[k];
  A* partial = static_cast<A*>(workspace);
  BorderSumKernel<T>
      <<<kBorderSumBlocks, kCudaThreads, 0, stream>>>(box, grad, n, partial);
  BorderSumFinishKernel<T><<<1, kCudaThreads, 0, stream>>>(partial, out);
}

template <typename I>
void LaunchGather(const void* x, const I* index, void* out, int64_t outer,
                  int64_t n, int64_t count, int64_t inner_bytes, int64_t* bad,
                  cudaStream_t stream) {
  // Rows move in the widest words their size and addresses allow.
  const uintptr_t align = reinterpret_cast<uintptr_t>(x) |
                          reinterpret_cast<uintptr_t>(out) |
                          static_cast<uintptr_t>(inner_bytes);
  if (align % 16 == 0) {
    GatherWords<Word<16>::Type>(x, index, out, outer, n, count,
                                inner_bytes / 16, bad, stream);
  } else if (align % 8 == 0) {
    GatherWords<Word<8>::Type>(x, index, out, outer, n, count, inner_bytes / 8,
                               bad, stream);
  } else if (align % 4 == 0) {
    GatherWords<Word<4>::Type>(x, index, out, outer, n, count, inner_bytes / 4,
                               bad, stream);
  } else if (align % 2 == 0) {
    GatherWords<Word<2>::Type>(x, index, out, outer, n, count, inner_bytes / 2,
                               bad, stream);
  } else {
    GatherWords<Word<1>::Type>(x, index, out, outer, n, count, inner_bytes, bad,
                               stream);
  }
}

template <typename T, typename I>
void LaunchGatherGrad(const T* grad, const I* index, T* x_grad, int64_t outer,
                      int64_t n, int64_t count, int64_t inner, int64_t* bad,
                      cudaStream_t stream) {
  const int64_t total = outer * count * inner;
  if (total == 0) return;
  if (FitsInt32(outer, n, count, inner)) {
    GatherGradKernel<T, I, int32_t>
        <<<CudaBlocks(total), kCudaThreads, 0, stream>>>(
            grad, index, x_grad, static_cast<int32_t>(n),
            static_cast<int32_t>(count), static_cast<int32_t>(inner),
            static_cast<int32_t>(total), bad);
  } else {
    GatherGradKernel<T, I, int64_t>
        <<<CudaBlocks(total), kCudaThreads, 0, stream>>>(
            grad, index, x_grad, n, count, inner, total, bad);
  }
}

template <typename I>
void LaunchCheckGatherIndices(const I* index, int64_t count, int64_t n,
                              int64_t* bad, cudaStream_t stream) {
  if (count == 0) return;
  CheckGatherIndicesKernel<I>
      <<<CudaBlocks(count), kCudaThreads, 0, stream>>>(index, count, n, bad);
}

#define SF_INSTANTIATE_PAD(T)                                          \
  template void LaunchFill<T>(T*, int64_t, T, const T*, cudaStream_t); \
  template void LaunchPad<T>(PadMode, const PadBox&, const T*, T*, T,  \
                             const T*, cudaStream_t);
SF_INSTANTIATE_PAD(float)
SF_INSTANTIATE_PAD(double)
SF_INSTANTIATE_PAD(int32_t)
SF_INSTANTIATE_PAD(int64_t)
SF_INSTANTIATE_PAD(bool)
#undef SF_INSTANTIATE_PAD

#define SF_INSTANTIATE_GRAD(T)                                                 \
  template void LaunchPadGradScatter<T>(PadMode, const PadBox&, const T*, T*,  \
                                        cudaStream_t);                         \
  template void LaunchBorderSum<T>(const PadBox&, const T*, T*, void*,         \
                                   cudaStream_t);                              \
  template void LaunchGatherGrad<T, int32_t>(const T*, const int32_t*, T*,     \
                                             int64_t, int64_t, int64_t,        \
                                             int64_t, int64_t*, cudaStream_t); \
  template void LaunchGatherGrad<T, int64_t>(const T*, const int64_t*, T*,     \
                                             int64_t, int64_t, int64_t,        \
                                             int64_t, int64_t*, cudaStream_t);
SF_INSTANTIATE_GRAD(float)
SF_INSTANTIATE_GRAD(double)
SF_INSTANTIATE_GRAD(int32_t)
SF_INSTANTIATE_GRAD(int64_t)
#undef SF_INSTANTIATE_GRAD

template void LaunchGather<int32_t>(const void*, const int32_t*, void*, int64_t,
                                    int64_t, int64_t, int64_t, int64_t*,
                                    cudaStream_t);
template void LaunchGather<int64_t>(const void*, const int64_t*, void*, int64_t,
                                    int64_t, int64_t, int64_t, int64_t*,
                                    cudaStream_t);
template void LaunchCheckGatherIndices<int32_t>(const int32_t*, int64_t,
                                                int64_t, int64_t*,
                                                cudaStream_t);
template void LaunchCheckGatherIndices<int64_t>(const int64_t*, int64_t,
                                                int64_t, int64_t*,
                                                cudaStream_t);

}  // namespace cuda
}  // namespace scopeflow
