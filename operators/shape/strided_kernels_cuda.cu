// Strided copies and strided sums: the data movement of transpose, expand,
// tile, slice, concat and split, and the reductions of their gradients.
#include <cstdint>

#include "operators/shape/shape_kernels_cuda.h"
#include "operators/shape/word_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

// A StridedBox in the index type the kernel computes offsets in: 32-bit
// where every offset fits, as 64-bit division is several times slower.
template <typename Index>
struct Box {
  int rank;
  Index dims[kMaxBoxRank];
  Index dst_strides[kMaxBoxRank];
  Index src_strides[kMaxBoxRank];
};

template <typename Index>
Box<Index> Narrow(const StridedBox& in) {
  Box<Index> box{};
  box.rank = in.rank;
  for (int k = 0; k < in.rank; ++k) {
    box.dims[k] = static_cast<Index>(in.dims[k]);
    box.dst_strides[k] = static_cast<Index>(in.dst_strides[k]);
    box.src_strides[k] = static_cast<Index>(in.src_strides[k]);
  }
  return box;
}

template <typename T, typename Index>
__global__ void StridedCopyKernel(T* dst, const T* src, Box<Index> box,
                                  Index n) {
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x;
       i < n; i += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index rest = i, d = 0, s = 0;
    for (int k = box.rank - 1; k > 0; --k) {
      const Index q = rest / box.dims[k];
      const Index index = rest - q * box.dims[k];
      d += index * box.dst_strides[k];
      s += index * box.src_strides[k];
      rest = q;
    }
    dst[d + rest * box.dst_strides[0]] = src[s + rest * box.src_strides[0]];
  }
}

// A box with one dim `a` contiguous in the destination and another, `b`,
// contiguous in the source (a transpose): it moves through shared memory
// in 32 x 32 tiles so that both reads and writes are coalesced. The other
// dims are a batch of such tiles.
constexpr int kTile = 32;
constexpr int kTileRows = 8;

template <typename Index>
struct TileBox {
  Index dim_a, dim_b, dst_stride_b, src_stride_a;
  Index tiles_a, tiles_b, batch;
  int batch_rank;
  Index batch_dims[kMaxBoxRank];
  Index batch_dst[kMaxBoxRank];
  Index batch_src[kMaxBoxRank];
};

template <typename T, typename Index>
__global__ void TiledTransposeKernel(T* dst, const T* src, TileBox<Index> p) {
  __shared__ T tile[kTile][kTile + 1];
  const Index tiles = p.tiles_a * p.tiles_b;
  const Index total = tiles * p.batch;
  for (Index t = blockIdx.x; t < total; t += gridDim.x) {
    Index rest = t / tiles;
    const Index in_batch = t - rest * tiles;
    Index d = 0, s = 0;
    for (int k = p.batch_rank - 1; k >= 0; --k) {
      const Index q = rest / p.batch_dims[k];
      const Index index = rest - q * p.batch_dims[k];
      d += index * p.batch_dst[k];
      s += index * p.batch_src[k];
      rest = q;
    }
    const Index a0 = (in_batch % p.tiles_a) * kTile;
    const Index b0 = (in_batch / p.tiles_a) * kTile;
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const Index a = a0 + k, b = b0 + threadIdx.x;
      if (a < p.dim_a && b < p.dim_b) {
        tile[k][threadIdx.x] = src[s + a * p.src_stride_a + b];
      }
    }
    __syncthreads();
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const Index b = b0 + k, a = a0 + threadIdx.x;
      if (a < p.dim_a && b < p.dim_b) {
        dst[d + b * p.dst_stride_b + a] = tile[threadIdx.x][k];
      }
    }
    __syncthreads();
  }
}

int64_t Abs(int64_t v) { return v < 0 ? -v : v; }

// Whether every element index and offset of `box` fits a signed 32-bit
// Index with room for the grid stride.
bool FitsInt32(const StridedBox& box, int64_t n) {
  constexpr int64_t kLimit = int64_t{1} << 30;
  int64_t dst_reach = 0, src_reach = 0;
  for (int k = 0; k < box.rank; ++k) {
    dst_reach += (box.dims[k] - 1) * Abs(box.dst_strides[k]);
    src_reach += (box.dims[k] - 1) * Abs(box.src_strides[k]);
  }
  return n <= kLimit && dst_reach <= kLimit && src_reach <= kLimit;
}

// Where the innermost dim is contiguous on both sides, moves pairs of
// elements as one element of twice the size while sizes, strides and
// addresses allow, up to 16 bytes (vector loads and stores).
void Widen(StridedBox& box, int& size, const void* dst, const void* src) {
  const int last = box.rank - 1;
  if (box.dst_strides[last] != 1 || box.src_strides[last] != 1) return;
  while (size < 16 && box.dims[last] % 2 == 0 &&
         reinterpret_cast<uintptr_t>(dst) % (2 * size) == 0 &&
         reinterpret_cast<uintptr_t>(src) % (2 * size) == 0) {
    bool even = true;
    for (int k = 0; k < last; ++k) {
      even = even && box.dst_strides[k] % 2 == 0 && box.src_strides[k] % 2 == 0;
    }
    if (!even) return;
    box.dims[last] /= 2;
    for (int k = 0; k < last; ++k) {
      box.dst_strides[k] /= 2;
      box.src_strides[k] /= 2;
    }
    size *= 2;
  }
}

// The dims of a transpose worth tiling: `a` of destination stride 1, `b`
// of source stride 1, both long enough to fill tiles. False otherwise.
bool FindTileDims(const StridedBox& box, int* a, int* b) {
  constexpr int64_t kMinTiledDim = 16;
  *a = *b = -1;
  for (int k = 0; k < box.rank; ++k) {
    if (box.dst_strides[k] == 1 && *a < 0) *a = k;
    if (box.src_strides[k] == 1 && *b < 0) *b = k;
  }
  return *a >= 0 && *b >= 0 && *a != *b && box.dims[*a] >= kMinTiledDim &&
         box.dims[*b] >= kMinTiledDim;
}

template <typename T, typename Index>
void LaunchTiled(T* dst, const T* src, const StridedBox& box, int a, int b,
                 cudaStream_t stream) {
  TileBox<Index> p{};
  p.dim_a = static_cast<Index>(box.dims[a]);
  p.dim_b = static_cast<Index>(box.dims[b]);
  p.dst_stride_b = static_cast<Index>(box.dst_strides[b]);
  p.src_stride_a = static_cast<Index>(box.src_strides[a]);
  p.tiles_a = (p.dim_a + kTile - 1) / kTile;
  p.tiles_b = (p.dim_b + kTile - 1) / kTile;
  p.batch = 1;
  for (int k = 0; k < box.rank; ++k) {
    if (k == a || k == b) continue;
    p.batch_dims[p.batch_rank] = static_cast<Index>(box.dims[k]);
    p.batch_dst[p.batch_rank] = static_cast<Index>(box.dst_strides[k]);
    p.batch_src[p.batch_rank] = static_cast<Index>(box.src_strides[k]);
    p.batch *= p.batch_dims[p.batch_rank];
    ++p.batch_rank;
  }
  const int64_t total = static_cast<int64_t>(p.tiles_a) * p.tiles_b * p.batch;
  const unsigned blocks = static_cast<unsigned>(total < 65535 ? total : 65535);
  TiledTransposeKernel<T, Index>
      <<<blocks, dim3(kTile, kTileRows), 0, stream>>>(dst, src, p);
}

template <int kBytes>
void CopyWords(void* dst, const void* src, const StridedBox& box,
               cudaStream_t stream) {
  using T = typename Word<kBytes>::Type;
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  int64_t n = 1;
  for (int k = 0; k < box.rank; ++k) n *= box.dims[k];
  const bool narrow = FitsInt32(box, n);
  if constexpr (kBytes <= 8) {
    int a, b;
    if (FindTileDims(box, &a, &b)) {
      if (narrow) {
        LaunchTiled<T, int32_t>(d, s, box, a, b, stream);
      } else {
        LaunchTiled<T, int64_t>(d, s, box, a, b, stream);
      }
      return;
    }
  }
  if (narrow) {
    StridedCopyKernel<T, int32_t><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
        d, s, Narrow<int32_t>(box), static_cast<int32_t>(n));
  } else {
    StridedCopyKernel<T, int64_t><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
        d, s, Narrow<int64_t>(box), n);
  }
}

// --- Strided sums ---

// Sums of integers wrap around, in unsigned arithmetic where that is
// defined.
template <typename T>
struct Acc {
  using Type = T;
};
template <>
struct Acc<int32_t> {
  using Type = uint32_t;
};
template <>
struct Acc<int64_t> {
  using Type = unsigned long long;  // NOLINT: the type __shfl_* takes
};

// The source offset of output m, and its offset in `out`.
__device__ int64_t KeptOffset(const SumBox& box, int64_t m, int64_t* out) {
  int64_t s = 0, o = 0;
  for (int k = box.kept_rank - 1; k >= 0; --k) {
    const int64_t q = m / box.kept_dims[k];
    const int64_t index = m - q * box.kept_dims[k];
    s += index * box.kept_src_strides[k];
    o += index * box.kept_out_strides[k];
    m = q;
  }
  *out = o;
  return s;
}

__device__ int64_t ReducedOffset(const SumBox& box, int64_t r) {
  int64_t s = 0;
  for (int k = box.reduced_rank - 1; k >= 0; --k) {
    const int64_t q = r / box.reduced_dims[k];
    s += (r - q * box.reduced_dims[k]) * box.reduced_src_strides[k];
    r = q;
  }
  return s;
}

// The sum over a group of kLanes threads (1, a warp, or the whole block of
// kCudaThreads), in lane 0.
template <int kLanes, typename A>
__device__ A GroupSum(A v) {
  if constexpr (kLanes == 1) {
    return v;
  } else {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    if constexpr (kLanes == 32) {
      return v;
    } else {
      __shared__ A warps[kCudaThreads / 32];
      const int warp = threadIdx.x / 32;
      if (threadIdx.x % 32 == 0) warps[warp] = v;
      __syncthreads();
      v = A(0);
      if (threadIdx.x < kCudaThreads / 32) v = warps[threadIdx.x];
      if (warp == 0) {
#pragma unroll
        for (int offset = kCudaThreads / 64; offset > 0; offset /= 2) {
          v += __shfl_down_sync(0xffffffffu, v, offset);
        }
      }
      __syncthreads();  // warps[] is reused by the next call
      return v;
    }
  }
}

// What the first pass of a sum keeps: the output itself when the reduced
// elements are not split, else the partial sum of split s.
template <typename T, typename A>
__device__ void Store(T* out, int64_t out_offset, A* partial, int64_t outputs,
                      int64_t m, int64_t s, int64_t splits, bool accumulate,
                      A sum) {
  if (splits > 1) {
    partial[s * outputs + m] = sum;
  } else {
    out[out_offset] = static_cast<T>(
        accumulate ? static_cast<A>(out[out_offset]) + sum : sum);
  }
}

// kLanes threads per (output, split), striding over its reduced elements:
// coalesced where the reduced dims are innermost in the source.
template <typename T, int kLanes>
__global__ void SumRowsKernel(SumBox box, int64_t outputs, int64_t reduced,
                              int64_t chunk, int64_t splits, const T* src,
                              T* out, bool accumulate,
                              typename Acc<T>::Type* partial) {
  using A = typename Acc<T>::Type;
  const int lane = threadIdx.x % kLanes;
  const int64_t group =
      (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / kLanes;
  const int64_t groups = int64_t{gridDim.x} * blockDim.x / kLanes;
  // Every thread of a group runs the same iterations, as GroupSum needs.
  for (int64_t w = group; w < outputs * splits; w += groups) {
    const int64_t m = w % outputs, s = w / outputs;
    int64_t out_offset;
    const int64_t base = KeptOffset(box, m, &out_offset);
    const int64_t end = min(reduced, (s + 1) * chunk);
    A sum = A(0);
    for (int64_t r = s * chunk + lane; r < end; r += kLanes) {
      sum += static_cast<A>(src[base + ReducedOffset(box, r)]);
    }
    sum = GroupSum<kLanes>(sum);
    if (lane == 0) {
      Store(out, out_offset, partial, outputs, m, s, splits, accumulate, sum);
    }
  }
}

// Blocks of 32 neighbouring outputs x kColumnRows threads each striding
// over the reduced elements: coalesced where a kept dim is innermost in
// the source (the sum over a batch).
constexpr int kColumnRows = 8;

template <typename T>
__global__ void SumColumnsKernel(SumBox box, int64_t outputs, int64_t reduced,
                                 int64_t chunk, int64_t splits, const T* src,
                                 T* out, bool accumulate,
                                 typename Acc<T>::Type* partial) {
  using A = typename Acc<T>::Type;
  __shared__ A sums[kColumnRows][33];
  const int64_t tiles = (outputs + 31) / 32;
  for (int64_t w = blockIdx.x; w < tiles * splits; w += gridDim.x) {
    const int64_t s = w / tiles;
    const int64_t m = (w - s * tiles) * 32 + threadIdx.x;
    A sum = A(0);
    int64_t out_offset = 0;
    if (m < outputs) {
      const int64_t base = KeptOffset(box, m, &out_offset);
      const int64_t end = min(reduced, (s + 1) * chunk);
      for (int64_t r = s * chunk + threadIdx.y; r < end; r += kColumnRows) {
        sum += static_cast<A>(src[base + ReducedOffset(box, r)]);
      }
    }
    sums[threadIdx.y][threadIdx.x] = sum;
    __syncthreads();
    if (threadIdx.y == 0 && m < outputs) {
      for (int k = 1; k < kColumnRows; ++k) sum += sums[k][threadIdx.x];
      Store(out, out_offset, partial, outputs, m, s, splits, accumulate, sum);
    }
    __syncthreads();
  }
}

// The second pass of a split sum: each output adds its splits in order.
template <typename T>
__global__ void SumSplitsKernel(SumBox box, int64_t outputs, int64_t splits,
                                T* out, bool accumulate,
                                const typename Acc<T>::Type* partial) {
  using A = typename Acc<T>::Type;
  SF_CUDA_GRID_LOOP(m, outputs) {
    A sum = A(0);
    for (int64_t s = 0; s < splits; ++s) sum += partial[s * outputs + m];
    int64_t out_offset;
    KeptOffset(box, m, &out_offset);
    out[out_offset] = static_cast<T>(
        accumulate ? static_cast<A>(out[out_offset]) + sum : sum);
  }
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

void LaunchStridedCopy(void* dst, const void* src, const StridedBox& in,
                       int element_size, cudaStream_t stream) {
  StridedBox box = in;
  if (box.rank == 0) {
    box.rank = 1;
    box.dims[0] = 1;
    box.dst_strides[0] = box.src_strides[0] = 1;
  }
  if (box.rank == 1 && box.dst_strides[0] == 1 && box.src_strides[0] == 1) {
    cudaMemcpyAsync(dst, src, box.dims[0] * element_size,
                    cudaMemcpyDeviceToDevice, stream);
    return;
  }
  int size = element_size;
  Widen(box, size, dst, src);
  switch (size) {
    case 1:
      return CopyWords<1>(dst, src, box, stream);
    case 2:
      return CopyWords<2>(dst, src, box, stream);
    case 4:
      return CopyWords<4>(dst, src, box, stream);
    case 8:
      return CopyWords<8>(dst, src, box, stream);
    default:
      return CopyWords<16>(dst, src, box, stream);
  }
}

template <typename T>
SumPlan PlanStridedSum(const SumBox& box) {
  // Threads that keep a large GPU busy; fewer leave the sum latency-bound.
  constexpr int64_t kBusyThreads = int64_t{1} << 18;
  SumPlan plan;
  plan.outputs = 1;
  for (int k = 0; k < box.kept_rank; ++k) plan.outputs *= box.kept_dims[k];
  plan.reduced = 1;
  for (int k = 0; k < box.reduced_rank; ++k)
    plan.reduced *= box.reduced_dims[k];
  if (plan.outputs == 0 || plan.reduced == 0) return plan;
  const bool kept_inner =
      box.kept_rank > 0 && box.kept_src_strides[box.kept_rank - 1] == 1;
  plan.columns = kept_inner && plan.outputs >= 32 && plan.reduced >= 2;
  int64_t threads_per_split;
  int64_t per_split_min;  // reduced elements worth a split of their own
  if (plan.columns) {
    threads_per_split = CeilDiv(plan.outputs, 32) * 32 * kColumnRows;
    per_split_min = 8 * kColumnRows;
  } else {
    if (plan.reduced < 16) {
      plan.lanes = 1;
    } else if (plan.reduced < 4096 || plan.outputs >= 1024) {
      plan.lanes = 32;
    } else {
      plan.lanes = kCudaThreads;
    }
    threads_per_split = plan.outputs * plan.lanes;
    per_split_min = 8 * plan.lanes;
  }
  int64_t splits = kBusyThreads / threads_per_split;
  const int64_t most = plan.reduced / per_split_min;
  if (splits > most) splits = most;
  if (splits < 1) splits = 1;
  const int64_t chunk = CeilDiv(plan.reduced, splits);
  plan.splits = chunk > 0 ? CeilDiv(plan.reduced, chunk) : 1;
  plan.workspace_bytes = plan.splits > 1
                             ? static_cast<size_t>(plan.splits * plan.outputs) *
                                   sizeof(typename Acc<T>::Type)
                             : 0;
  return plan;
}

template <typename T>
void LaunchStridedSum(const SumPlan& plan, const SumBox& box, T* out,
                      const T* src, bool accumulate, void* workspace,
                      cudaStream_t stream) {
  using A = typename Acc<T>::Type;
  if (plan.outputs == 0 || plan.reduced == 0) return;
  A* partial = static_cast<A*>(workspace);
  const int64_t chunk = CeilDiv(plan.reduced, plan.splits);
  if (plan.columns) {
    const int64_t work = CeilDiv(plan.outputs, 32) * plan.splits;
    SumColumnsKernel<T><<<static_cast<unsigned>(work < 65535 ? work : 65535),
                          dim3(32, kColumnRows), 0, stream>>>(
        box, plan.outputs, plan.reduced, chunk, plan.splits, src, out,
        accumulate, partial);
  } else {
    const unsigned blocks = CudaBlocks(plan.outputs * plan.splits * plan.lanes);
    switch (plan.lanes) {
      case 1:
        SumRowsKernel<T, 1><<<blocks, kCudaThreads, 0, stream>>>(
            box, plan.outputs, plan.reduced, chunk, plan.splits, src, out,
            accumulate, partial);
        break;
      case 32:
        SumRowsKernel<T, 32><<<blocks, kCudaThreads, 0, stream>>>(
            box, plan.outputs, plan.reduced, chunk, plan.splits, src, out,
            accumulate, partial);
        break;
      default:
        SumRowsKernel<T, kCudaThreads><<<blocks, kCudaThreads, 0, stream>>>(
            box, plan.outputs, plan.reduced, chunk, plan.splits, src, out,
            accumulate, partial);
        break;
    }
  }
  if (plan.splits > 1) {
    SumSplitsKernel<T><<<CudaBlocks(plan.outputs), kCudaThreads, 0, stream>>>(
        box, plan.outputs, plan.splits, out, accumulate, partial);
  }
}

#define SF_INSTANTIATE_STRIDED_SUM(T)                                  \
  template SumPlan PlanStridedSum<T>(const SumBox&);                   \
  template void LaunchStridedSum<T>(const SumPlan&, const SumBox&, T*, \
                                    const T*, bool, void*, cudaStream_t);
SF_INSTANTIATE_STRIDED_SUM(float)
SF_INSTANTIATE_STRIDED_SUM(double)
SF_INSTANTIATE_STRIDED_SUM(int32_t)
SF_INSTANTIATE_STRIDED_SUM(int64_t)
#undef SF_INSTANTIATE_STRIDED_SUM

}  // namespace cuda
}  // namespace scopeflow
