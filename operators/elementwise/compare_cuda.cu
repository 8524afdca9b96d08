// The comparisons and where on the device, with compare.cc's semantics:
// every comparison with NaN but not-equal is false (IEEE, as on the CPU).
#include <cstdint>

#include "operators/elementwise/broadcast_kernels_cuda.h"
#include "operators/elementwise/elementwise_cuda.h"
#include "operators/elementwise/kernel_util_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

struct EqualFn {
  template <typename T>
  __device__ bool operator()(T a, T b, int64_t) const {
    return a == b;
  }
};

struct LessFn {
  template <typename T>
  __device__ bool operator()(T a, T b, int64_t) const {
    return a < b;
  }
};

struct GreaterFn {
  template <typename T>
  __device__ bool operator()(T a, T b, int64_t) const {
    return a > b;
  }
};

struct LessEqualFn {
  template <typename T>
  __device__ bool operator()(T a, T b, int64_t) const {
    return a <= b;
  }
};

struct GreaterEqualFn {
  template <typename T>
  __device__ bool operator()(T a, T b, int64_t) const {
    return a >= b;
  }
};

// Every operand as large as the output, V elements per load.
template <typename T, int V>
__global__ void WhereSameKernel(const bool* c, const T* x, const T* y, T* out,
                                int64_t n) {
  const int64_t packs = n / V;
  SF_CUDA_GRID_LOOP(p, packs) {
    const Pack<bool, V> cs = reinterpret_cast<const Pack<bool, V>*>(c)[p];
    const Pack<T, V> xs = reinterpret_cast<const Pack<T, V>*>(x)[p];
    const Pack<T, V> ys = reinterpret_cast<const Pack<T, V>*>(y)[p];
    Pack<T, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = cs.v[j] ? xs.v[j] : ys.v[j];
    reinterpret_cast<Pack<T, V>*>(out)[p] = r;
  }
  SF_CUDA_TAIL_LOOP(i, packs * V, n) { out[i] = c[i] ? x[i] : y[i]; }
}

// Each operand as large as the output (step 1) or a single element (step
// 0).
template <typename T>
__global__ void WhereFlatKernel(const bool* c, int64_t c_step, const T* x,
                                int64_t x_step, const T* y, int64_t y_step,
                                T* out, int64_t n) {
  SF_CUDA_GRID_LOOP(i, n) {
    out[i] = c[i * c_step] ? x[i * x_step] : y[i * y_step];
  }
}

template <typename T, typename IndexT>
__global__ void WhereBroadcastKernel(const bool* c, const T* x, const T* y,
                                     T* out, IndexT n,
                                     Offsets<3, IndexT> offsets) {
  for (IndexT i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x) {
    IndexT at[3];
    offsets.Get(i, at);
    out[i] = c[at[0]] ? x[at[1]] : y[at[2]];
  }
}

}  // namespace

template <typename T>
void LaunchCompare(CompareOp op, const T* x, const T* y, bool* out, int64_t n,
                   const BroadcastShape& shape, cudaStream_t stream) {
  switch (op) {
    case CompareOp::kEqual:
      return LaunchBroadcast2(EqualFn(), x, y, out, n, shape, stream);
    case CompareOp::kLess:
      return LaunchBroadcast2(LessFn(), x, y, out, n, shape, stream);
    case CompareOp::kGreater:
      return LaunchBroadcast2(GreaterFn(), x, y, out, n, shape, stream);
    case CompareOp::kLessEqual:
      return LaunchBroadcast2(LessEqualFn(), x, y, out, n, shape, stream);
    case CompareOp::kGreaterEqual:
      return LaunchBroadcast2(GreaterEqualFn(), x, y, out, n, shape, stream);
  }
}

template <typename T>
void LaunchWhere(const bool* condition, const T* x, const T* y, T* out,
                 int64_t n, const BroadcastShape& shape, cudaStream_t stream) {
  if (n == 0) return;
  if (shape.rank <= 1) {
    const int64_t c_step = shape.strides[0][0];
    const int64_t x_step = shape.strides[1][0];
    const int64_t y_step = shape.strides[2][0];
    constexpr int V = PackSize<T, bool>();
    if (c_step == 1 && x_step == 1 && y_step == 1 &&
        PacksAligned<V>(condition, x, y, out)) {
      WhereSameKernel<T, V>
          <<<CudaBlocks((n + V - 1) / V), kCudaThreads, 0, stream>>>(
              condition, x, y, out, n);
    } else {
      WhereFlatKernel<T><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
          condition, c_step, x, x_step, y, y_step, out, n);
    }
    return;
  }
  if (FitsInt32(n)) {
    WhereBroadcastKernel<T, uint32_t>
        <<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
            condition, x, y, out, static_cast<uint32_t>(n),
            MakeOffsets<3, uint32_t>(shape));
  } else {
    WhereBroadcastKernel<T, int64_t>
        <<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
            condition, x, y, out, n, MakeOffsets<3, int64_t>(shape));
  }
}

#define SF_INSTANTIATE_COMPARE(T)                                            \
  template void LaunchCompare<T>(CompareOp, const T*, const T*, bool*,       \
                                 int64_t, const BroadcastShape&,             \
                                 cudaStream_t);                              \
  template void LaunchWhere<T>(const bool*, const T*, const T*, T*, int64_t, \
                               const BroadcastShape&, cudaStream_t)

SF_INSTANTIATE_COMPARE(float);
SF_INSTANTIATE_COMPARE(double);
SF_INSTANTIATE_COMPARE(int32_t);
SF_INSTANTIATE_COMPARE(int64_t);
SF_INSTANTIATE_COMPARE(bool);

#undef SF_INSTANTIATE_COMPARE

}  // namespace cuda
}  // namespace scopeflow
