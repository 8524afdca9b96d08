// Kernels over the broadcast of two operands, generic in the operation
// (nvcc only): binary_cuda.cu and compare_cuda.cu instantiate them.
//
// An operation is a functor: R op(T a, T b, int64_t b_index), b_index being
// the element of the second operand read (for error reports).
#ifndef SCOPEFLOW_OPERATORS_ELEMENTWISE_BROADCAST_KERNELS_CUDA_H_
#define SCOPEFLOW_OPERATORS_ELEMENTWISE_BROADCAST_KERNELS_CUDA_H_

#include <cstdint>

#include "operators/elementwise/elementwise_cuda.h"
#include "operators/elementwise/kernel_util_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {

// Operands as large as the output (kXFull, kYFull) or single elements: no
// index arithmetic, and V elements per load where the pointers allow.
template <typename T, typename R, typename Op, int V, bool kXFull, bool kYFull>
__global__ void BinaryFlatKernel(Op op, const T* x, const T* y, R* out,
                                 int64_t n) {
  const T x0 = kXFull ? T() : *x;
  const T y0 = kYFull ? T() : *y;
  const int64_t packs = n / V;
  SF_CUDA_GRID_LOOP(p, packs) {
    const int64_t i = p * V;
    Pack<T, V> a;
    Pack<T, V> b;
    Pack<R, V> r;
    if constexpr (kXFull) a = reinterpret_cast<const Pack<T, V>*>(x)[p];
    if constexpr (kYFull) b = reinterpret_cast<const Pack<T, V>*>(y)[p];
#pragma unroll
    for (int j = 0; j < V; ++j) {
      r.v[j] = op(kXFull ? a.v[j] : x0, kYFull ? b.v[j] : y0,
                  kYFull ? i + j : int64_t{0});
    }
    reinterpret_cast<Pack<R, V>*>(out)[p] = r;
  }
  SF_CUDA_TAIL_LOOP(i, packs * V, n) {
    out[i] =
        op(kXFull ? x[i] : x0, kYFull ? y[i] : y0, kYFull ? i : int64_t{0});
  }
}

// Any broadcast: the operand offsets of V output elements at a time from
// their index. With V > 1 the innermost dimension is a multiple of V, so no
// pack crosses it: operands that walk it (kXStep, kYStep) load a pack, the
// others one element for all V.
template <typename T, typename R, typename Op, typename IndexT, int V,
          bool kXStep, bool kYStep>
__global__ void BinaryBroadcastKernel(Op op, const T* x, const T* y, R* out,
                                      IndexT packs,
                                      Offsets<2, IndexT> offsets) {
  for (IndexT p = blockIdx.x * blockDim.x + threadIdx.x; p < packs;
       p += blockDim.x * gridDim.x) {
    const IndexT i = p * V;
    IndexT at[2];
    offsets.Get(i, at);
    Pack<T, V> a;
    Pack<T, V> b;
    Pack<R, V> r;
    if constexpr (kXStep) {
      a = *reinterpret_cast<const Pack<T, V>*>(x + at[0]);
    } else {
      const T v = x[at[0]];
#pragma unroll
      for (int j = 0; j < V; ++j) a.v[j] = v;
    }
    if constexpr (kYStep) {
      b = *reinterpret_cast<const Pack<T, V>*>(y + at[1]);
    } else {
      const T v = y[at[1]];
#pragma unroll
      for (int j = 0; j < V; ++j) b.v[j] = v;
    }
#pragma unroll
    for (int j = 0; j < V; ++j) {
      r.v[j] =
          op(a.v[j], b.v[j], static_cast<int64_t>(at[1]) + (kYStep ? j : 0));
    }
    *reinterpret_cast<Pack<R, V>*>(out + i) = r;
  }
}

template <typename T, typename R, typename Op, typename IndexT, int V,
          bool kXStep, bool kYStep>
void LaunchBinaryBroadcastKernel(Op op, const T* x, const T* y, R* out,
                                 int64_t n, const BroadcastShape& shape,
                                 cudaStream_t stream) {
  const int64_t packs = n / V;
  BinaryBroadcastKernel<T, R, Op, IndexT, V, kXStep, kYStep>
      <<<CudaBlocks(packs), kCudaThreads, 0, stream>>>(
          op, x, y, out, static_cast<IndexT>(packs),
          MakeOffsets<2, IndexT>(shape));
}

template <typename T, typename R, typename Op, typename IndexT>
void LaunchBinaryBroadcast(Op op, const T* x, const T* y, R* out, int64_t n,
                           const BroadcastShape& shape, cudaStream_t stream) {
  constexpr int V = PackSize<T, R>();
  const int inner = shape.rank - 1;
  const bool x_step = shape.strides[0][inner] != 0;
  const bool y_step = shape.strides[1][inner] != 0;
  const bool packed = V > 1 && shape.dims[inner] % V == 0 &&
                      (x_step || y_step) && (!x_step || PacksAligned<V>(x)) &&
                      (!y_step || PacksAligned<V>(y)) && PacksAligned<V>(out);
  if (!packed) {
    LaunchBinaryBroadcastKernel<T, R, Op, IndexT, 1, true, true>(
        op, x, y, out, n, shape, stream);
  } else if (x_step && y_step) {
    LaunchBinaryBroadcastKernel<T, R, Op, IndexT, V, true, true>(
        op, x, y, out, n, shape, stream);
  } else if (x_step) {
    LaunchBinaryBroadcastKernel<T, R, Op, IndexT, V, true, false>(
        op, x, y, out, n, shape, stream);
  } else {
    LaunchBinaryBroadcastKernel<T, R, Op, IndexT, V, false, true>(
        op, x, y, out, n, shape, stream);
  }
}

template <typename T, typename R, typename Op, int V>
void LaunchBinaryFlat(Op op, const T* x, bool x_full, const T* y, bool y_full,
                      R* out, int64_t n, cudaStream_t stream) {
  const unsigned blocks = CudaBlocks((n + V - 1) / V);
  if (x_full && y_full) {
    BinaryFlatKernel<T, R, Op, V, true, true>
        <<<blocks, kCudaThreads, 0, stream>>>(op, x, y, out, n);
  } else if (x_full) {
    BinaryFlatKernel<T, R, Op, V, true, false>
        <<<blocks, kCudaThreads, 0, stream>>>(op, x, y, out, n);
  } else {
    BinaryFlatKernel<T, R, Op, V, false, true>
        <<<blocks, kCudaThreads, 0, stream>>>(op, x, y, out, n);
  }
}

// out = op(x, y) over the n elements of `shape` (operands 0 and 1).
template <typename T, typename R, typename Op>
void LaunchBroadcast2(Op op, const T* x, const T* y, R* out, int64_t n,
                      const BroadcastShape& shape, cudaStream_t stream) {
  if (n == 0) return;
  if (shape.rank <= 1) {
    bool x_full = shape.strides[0][0] != 0;
    bool y_full = shape.strides[1][0] != 0;
    // Both single elements: n is 1, and either kernel reads element 0.
    if (!x_full && !y_full) x_full = y_full = true;
    constexpr int V = PackSize<T, R>();
    if ((!x_full || PacksAligned<V>(x)) && (!y_full || PacksAligned<V>(y)) &&
        PacksAligned<V>(out)) {
      LaunchBinaryFlat<T, R, Op, V>(op, x, x_full, y, y_full, out, n, stream);
    } else {
      LaunchBinaryFlat<T, R, Op, 1>(op, x, x_full, y, y_full, out, n, stream);
    }
    return;
  }
  if (FitsInt32(n)) {
    LaunchBinaryBroadcast<T, R, Op, uint32_t>(op, x, y, out, n, shape, stream);
  } else {
    LaunchBinaryBroadcast<T, R, Op, int64_t>(op, x, y, out, n, shape, stream);
  }
}

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ELEMENTWISE_BROADCAST_KERNELS_CUDA_H_
