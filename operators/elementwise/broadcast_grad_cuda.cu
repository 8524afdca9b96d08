// The gradients of the broadcast ops on the device (<op>_grad of binary.cc,
// where_grad of compare.cc): each operand's gradient is the sum, over the
// output elements that read an element of it, of a term of that output
// element, as elementwise::ReduceBroadcastGrad computes on the CPU.
//
// The output's dimensions split into those the operand A keeps and those
// along which it is broadcast (reduced). Element k of A's gradient sums
// over the reduced index r; a block holds a tile of k and, per k, several
// lanes that stride through r, summed in shared memory. Lanes run along x
// (consecutive threads, consecutive r) where A is broadcast along the
// innermost dimension, else along y with consecutive threads on
// consecutive k.
// Long reductions split over blocks into partial sums, added by a second
// pass of the same kernel.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "operators/elementwise/elementwise_cuda.h"
#include "operators/elementwise/kernel_util_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

// d Out / d X (Dx) and d Out / d Y (Dy) at one element times the gradient
// g flowing into Out, as the Grad functors of binary.cc.
struct AddGrad {
  template <typename T>
  static __device__ T Dx(T, T, T g) {
    return g;
  }
  template <typename T>
  static __device__ T Dy(T, T, T g) {
    return g;
  }
};

struct SubGrad {
  template <typename T>
  static __device__ T Dx(T, T, T g) {
    return g;
  }
  template <typename T>
  static __device__ T Dy(T, T, T g) {
    return -g;
  }
};

struct MulGrad {
  template <typename T>
  static __device__ T Dx(T, T y, T g) {
    return g * y;
  }
  template <typename T>
  static __device__ T Dy(T x, T, T g) {
    return g * x;
  }
};

struct DivGrad {
  template <typename T>
  static __device__ T Dx(T, T y, T g) {
    return g / y;
  }
  template <typename T>
  static __device__ T Dy(T x, T y, T g) {
    return -g * (x / y) / y;
  }
};

// 0 rather than NaN where a limit makes the derivative so (binary.cc).
struct PowGrad {
  template <typename T>
  static __device__ T Dx(T x, T y, T g) {
    return y == 0 ? T{0} : g * y * Pow(x, y - T{1});
  }
  template <typename T>
  static __device__ T Dy(T x, T y, T g) {
    return x == 0 && y >= 0 ? T{0} : g * Pow(x, y) * Log(x);
  }
};

struct MaxGrad {
  template <typename T>
  static __device__ T Dx(T x, T y, T g) {
    return MaxTakesY(x, y) ? T{0} : g;
  }
  template <typename T>
  static __device__ T Dy(T x, T y, T g) {
    return MaxTakesY(x, y) ? g : T{0};
  }
};

struct MinGrad {
  template <typename T>
  static __device__ T Dx(T x, T y, T g) {
    return MinTakesY(x, y) ? T{0} : g;
  }
  template <typename T>
  static __device__ T Dy(T x, T y, T g) {
    return MinTakesY(x, y) ? g : T{0};
  }
};

// The terms summed: term(o, a, b) for output element o, element a of the
// operand whose gradient it is and element b of the other operand read.
template <typename T, typename Grad, bool kForY>
struct BinaryTerm {
  const T* x;
  const T* y;
  const T* g;

  template <typename IndexT>
  __device__ T operator()(IndexT o, IndexT a, IndexT b) const {
    if constexpr (kForY) {
      return Grad::Dy(x[b], y[a], g[o]);
    } else {
      return Grad::Dx(x[a], y[b], g[o]);
    }
  }
};

// where_grad: X's gradient where Condition holds, Y's elsewhere; b indexes
// Condition.
template <typename T, bool kForY>
struct WhereTerm {
  const bool* condition;
  const T* g;

  template <typename IndexT>
  __device__ T operator()(IndexT o, IndexT, IndexT b) const {
    return condition[b] != kForY ? g[o] : T{0};
  }
};

// The second pass: the partial sums of the first, as a [chunks, K] array.
template <typename T>
struct PartialTerm {
  const T* partials;

  template <typename IndexT>
  __device__ T operator()(IndexT o, IndexT, IndexT) const {
    return partials[o];
  }
};

// No operand broadcast: both gradients in one pass over the elements.
template <typename T, typename TermX, typename TermY>
__global__ void GradSameShapeKernel(TermX term_x, TermY term_y, T* dx, T* dy,
                                    int64_t n) {
  SF_CUDA_GRID_LOOP(i, n) {
    // Both computed before either store, so that each input is loaded once.
    const T vx = term_x(i, i, i);
    const T vy = term_y(i, i, i);
    dx[i] = vx;
    dy[i] = vy;
  }
}

// Element k of A's gradient sums term(o, k, b) over r < reduced_n, o and b
// being the sums of the parts `kept` gives for k and `reduced` for r
// (operand 0: the output, operand 1: the other operand read).
template <typename IndexT>
struct ReduceIndex {
  Offsets<2, IndexT> kept;
  Offsets<2, IndexT> reduced;
  IndexT kept_n = 0;
  IndexT reduced_n = 0;
};

// A not broadcast (reduced_n == 1): one term per element.
template <typename T, typename Term, typename IndexT>
__global__ void GradElementwiseKernel(Term term, Offsets<2, IndexT> kept,
                                      IndexT n, T* grad) {
  for (IndexT k = blockIdx.x * blockDim.x + threadIdx.x; k < n;
       k += blockDim.x * gridDim.x) {
    IndexT at[2];
    kept.Get(k, at);
    grad[k] = term(at[0], k, at[1]);
  }
}

// Writes out[chunk * kept_n + k], the sum over r in chunk blockIdx.y (of
// chunk_len) for every k. Block: lanes x k-tile (kLanesAlongX) or k-tile x
// lanes, the lane count a power of two, kCudaThreads threads at most.
template <typename T, typename Term, typename IndexT, bool kLanesAlongX>
__global__ void __launch_bounds__(kCudaThreads)
    GradReduceKernel(Term term, ReduceIndex<IndexT> index, IndexT chunk_len,
                     T* out) {
  __shared__ T partial[kCudaThreads];
  const int lane = kLanesAlongX ? threadIdx.x : threadIdx.y;
  const int lanes = kLanesAlongX ? blockDim.x : blockDim.y;
  const int k_local = kLanesAlongX ? threadIdx.y : threadIdx.x;
  const int k_per_block = kLanesAlongX ? blockDim.y : blockDim.x;
  const int lane_step = kLanesAlongX ? 1 : blockDim.x;
  const int slot = threadIdx.y * blockDim.x + threadIdx.x;
  const IndexT r_begin = blockIdx.y * chunk_len;
  const IndexT r_end = index.reduced_n - r_begin < chunk_len
                           ? index.reduced_n
                           : r_begin + chunk_len;
  const IndexT tiles = (index.kept_n + k_per_block - 1) / k_per_block;
  // The bounds are the same for the whole block, so every thread reaches
  // each barrier.
  for (IndexT tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const IndexT k = tile * k_per_block + k_local;
    T sum = T{0};
    if (k < index.kept_n) {
      IndexT base[2];
      index.kept.Get(k, base);
      const auto term_at = [&](IndexT r) {
        IndexT at[2];
        index.reduced.Get(r, at);
        return term(base[0] + at[0], k, base[1] + at[1]);
      };
      // Four independent sums, so that four loads are in flight at once.
      T sums[4] = {T{0}, T{0}, T{0}, T{0}};
      IndexT r = r_begin + lane;
      for (; r + 3 * lanes < r_end; r += 4 * lanes) {
#pragma unroll
        for (int u = 0; u < 4; ++u) sums[u] += term_at(r + u * lanes);
      }
      for (; r < r_end; r += lanes) sums[0] += term_at(r);
      sum = (sums[0] + sums[1]) + (sums[2] + sums[3]);
    }
    partial[slot] = sum;
    __syncthreads();
    for (int s = lanes / 2; s > 0; s /= 2) {
      if (lane < s) partial[slot] += partial[slot + s * lane_step];
      __syncthreads();
    }
    if (lane == 0 && k < index.kept_n) {
      out[blockIdx.y * index.kept_n + k] = partial[slot];
    }
    __syncthreads();  // Before the next tile overwrites `partial`.
  }
}

// How a reduction of kept_n sums of reduced_n terms is launched.
struct ReducePlan {
  bool lanes_along_x = false;
  unsigned block_x = 1;
  unsigned block_y = 1;
  int64_t tiles = 1;
  int64_t chunks = 1;
  int64_t chunk_len = 1;
};

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t NextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

// Enough blocks to fill an H100 (132 SMs, 8 blocks of 256 threads each)
// twice over; a reduction is split into chunks only up to that, and only
// while each lane keeps at least kMinTermsPerLane terms.
constexpr int64_t kTargetBlocks = 2048;
constexpr int64_t kMinTermsPerLane = 16;
constexpr int64_t kMaxGridY = 65535;

// `inner_run`: the length of the innermost dimension if A is broadcast
// along it (its terms are contiguous in the output), else 0.
ReducePlan PlanReduce(int64_t kept_n, int64_t reduced_n, int64_t inner_run,
                      bool allow_split) {
  ReducePlan plan;
  plan.lanes_along_x = inner_run > 0;
  int64_t lanes;
  int64_t k_per_block;
  if (plan.lanes_along_x) {
    // At least a warp's worth of lanes over a long run, all of a short one:
    // consecutive threads then read consecutive elements.
    lanes = std::clamp<int64_t>(NextPow2(CeilDiv(reduced_n, kMinTermsPerLane)),
                                NextPow2(std::min<int64_t>(inner_run, 32)),
                                kCudaThreads);
    k_per_block = std::min<int64_t>(kCudaThreads / lanes, NextPow2(kept_n));
    plan.block_x = static_cast<unsigned>(lanes);
    plan.block_y = static_cast<unsigned>(k_per_block);
  } else {
    k_per_block = std::min<int64_t>(32, NextPow2(kept_n));
    lanes = std::min<int64_t>(kCudaThreads / k_per_block, NextPow2(reduced_n));
    plan.block_x = static_cast<unsigned>(k_per_block);
    plan.block_y = static_cast<unsigned>(lanes);
  }
  plan.tiles = CeilDiv(kept_n, k_per_block);
  int64_t chunks = 1;
  if (allow_split && plan.tiles < kTargetBlocks) {
    chunks =
        std::min({CeilDiv(kTargetBlocks, plan.tiles),
                  CeilDiv(reduced_n, lanes * kMinTermsPerLane), kMaxGridY});
    chunks = std::max<int64_t>(chunks, 1);
  }
  plan.chunk_len = CeilDiv(reduced_n, chunks);
  plan.chunks = CeilDiv(reduced_n, plan.chunk_len);
  return plan;
}

// The kept and reduced dimensions of `shape` (operand 0: A, operand 1:
// B): A's element offset is the row-major index over the dimensions it
// keeps, since its other dimensions are 1.
struct SplitShape {
  int kept_rank = 0;
  int64_t kept_dims[kMaxBroadcastRank] = {};
  int64_t kept_strides[2][kMaxBroadcastRank] = {};
  int reduced_rank = 0;
  int64_t reduced_dims[kMaxBroadcastRank] = {};
  int64_t reduced_strides[2][kMaxBroadcastRank] = {};
  int64_t kept_n = 1;
  int64_t reduced_n = 1;
  int64_t inner_run = 0;
};

SplitShape Split(const BroadcastShape& shape) {
  SplitShape split;
  int64_t out_stride = 1;
  for (int d = shape.rank - 1; d >= 0; --d) {
    const bool kept = shape.strides[0][d] != 0;
    int& rank = kept ? split.kept_rank : split.reduced_rank;
    int64_t* dims = kept ? split.kept_dims : split.reduced_dims;
    int64_t(*strides)[kMaxBroadcastRank] =
        kept ? split.kept_strides : split.reduced_strides;
    // Collected innermost first; reversed below.
    dims[rank] = shape.dims[d];
    strides[0][rank] = out_stride;
    strides[1][rank] = shape.strides[1][d];
    ++rank;
    (kept ? split.kept_n : split.reduced_n) *= shape.dims[d];
    if (d == shape.rank - 1 && !kept) split.inner_run = shape.dims[d];
    out_stride *= shape.dims[d];
  }
  std::reverse(split.kept_dims, split.kept_dims + split.kept_rank);
  std::reverse(split.reduced_dims, split.reduced_dims + split.reduced_rank);
  for (int k = 0; k < 2; ++k) {
    std::reverse(split.kept_strides[k],
                 split.kept_strides[k] + split.kept_rank);
    std::reverse(split.reduced_strides[k],
                 split.reduced_strides[k] + split.reduced_rank);
  }
  return split;
}

template <typename IndexT>
ReduceIndex<IndexT> MakeReduceIndex(const SplitShape& split) {
  ReduceIndex<IndexT> index;
  const int64_t* kept[2] = {split.kept_strides[0], split.kept_strides[1]};
  const int64_t* reduced[2] = {split.reduced_strides[0],
                               split.reduced_strides[1]};
  index.kept = MakeOffsets<2, IndexT>(split.kept_rank, split.kept_dims, kept);
  index.reduced =
      MakeOffsets<2, IndexT>(split.reduced_rank, split.reduced_dims, reduced);
  index.kept_n = static_cast<IndexT>(split.kept_n);
  index.reduced_n = static_cast<IndexT>(split.reduced_n);
  return index;
}

// The second pass's view of the partial sums: [chunks, kept_n] row-major,
// k kept and the chunk reduced.
SplitShape PartialsShape(int64_t kept_n, int64_t chunks) {
  SplitShape split;
  if (kept_n > 1) {
    split.kept_rank = 1;
    split.kept_dims[0] = kept_n;
    split.kept_strides[0][0] = 1;
  }
  split.reduced_rank = 1;
  split.reduced_dims[0] = chunks;
  split.reduced_strides[0][0] = kept_n;
  split.kept_n = kept_n;
  split.reduced_n = chunks;
  split.inner_run = kept_n == 1 ? chunks : 0;
  return split;
}

template <typename T, typename Term, typename IndexT>
void LaunchReducePass(Term term, const ReduceIndex<IndexT>& index,
                      const ReducePlan& plan, T* out, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(plan.tiles, 65535)),
                  static_cast<unsigned>(plan.chunks));
  const dim3 block(plan.block_x, plan.block_y);
  const IndexT chunk_len = static_cast<IndexT>(plan.chunk_len);
  if (plan.lanes_along_x) {
    GradReduceKernel<T, Term, IndexT, true>
        <<<grid, block, 0, stream>>>(term, index, chunk_len, out);
  } else {
    GradReduceKernel<T, Term, IndexT, false>
        <<<grid, block, 0, stream>>>(term, index, chunk_len, out);
  }
}

template <typename T, typename Term, typename IndexT>
void Reduce(Term term, T* grad, const SplitShape& split, void* workspace,
            cudaStream_t stream) {
  const ReduceIndex<IndexT> index = MakeReduceIndex<IndexT>(split);
  if (split.reduced_n == 1) {
    GradElementwiseKernel<T, Term, IndexT>
        <<<CudaBlocks(split.kept_n), kCudaThreads, 0, stream>>>(
            term, index.kept, index.kept_n, grad);
    return;
  }
  const ReducePlan plan = PlanReduce(split.kept_n, split.reduced_n,
                                     split.inner_run, /*allow_split=*/true);
  if (plan.chunks == 1) {
    LaunchReducePass<T>(term, index, plan, grad, stream);
    return;
  }
  T* partials = static_cast<T*>(workspace);
  LaunchReducePass<T>(term, index, plan, partials, stream);
  const SplitShape second = PartialsShape(split.kept_n, plan.chunks);
  LaunchReducePass<T>(
      PartialTerm<T>{partials}, MakeReduceIndex<IndexT>(second),
      PlanReduce(second.kept_n, second.reduced_n, second.inner_run,
                 /*allow_split=*/false),
      grad, stream);
}

template <typename T, typename Term>
void ReduceTerm(Term term, T* grad, const BroadcastShape& shape,
                void* workspace, cudaStream_t stream) {
  const SplitShape split = Split(shape);
  if (FitsInt32(split.kept_n * split.reduced_n)) {
    Reduce<T, Term, uint32_t>(term, grad, split, workspace, stream);
  } else {
    Reduce<T, Term, int64_t>(term, grad, split, workspace, stream);
  }
}

template <typename T, typename Grad>
void ReduceBinary(const GradInputs<T>& in, bool for_y, T* grad,
                  const BroadcastShape& shape, void* workspace,
                  cudaStream_t stream) {
  if (for_y) {
    ReduceTerm<T>(BinaryTerm<T, Grad, true>{in.x, in.y, in.dout}, grad, shape,
                  workspace, stream);
  } else {
    ReduceTerm<T>(BinaryTerm<T, Grad, false>{in.x, in.y, in.dout}, grad, shape,
                  workspace, stream);
  }
}

template <typename T, typename TermX, typename TermY>
void LaunchSameShape(TermX term_x, TermY term_y, T* dx, T* dy, int64_t n,
                     cudaStream_t stream) {
  GradSameShapeKernel<T>
      <<<CudaBlocks(n), kCudaThreads, 0, stream>>>(term_x, term_y, dx, dy, n);
}

template <typename T, typename Grad>
void SameShapeBinary(const GradInputs<T>& in, T* dx, T* dy, int64_t n,
                     cudaStream_t stream) {
  LaunchSameShape(BinaryTerm<T, Grad, false>{in.x, in.y, in.dout},
                  BinaryTerm<T, Grad, true>{in.x, in.y, in.dout}, dx, dy, n,
                  stream);
}

}  // namespace

size_t GradWorkspaceBytes(const BroadcastShape& shape, size_t element_size) {
  const SplitShape split = Split(shape);
  if (split.reduced_n == 1) return 0;
  const ReducePlan plan = PlanReduce(split.kept_n, split.reduced_n,
                                     split.inner_run, /*allow_split=*/true);
  if (plan.chunks == 1) return 0;
  return static_cast<size_t>(plan.chunks * split.kept_n) * element_size;
}

template <typename T>
void LaunchGradSameShape(const GradInputs<T>& in, T* dx, T* dy, int64_t n,
                         cudaStream_t stream) {
  if (n == 0) return;
  switch (in.op) {
    case GradOp::kAdd:
      return SameShapeBinary<T, AddGrad>(in, dx, dy, n, stream);
    case GradOp::kSub:
      return SameShapeBinary<T, SubGrad>(in, dx, dy, n, stream);
    case GradOp::kMul:
      return SameShapeBinary<T, MulGrad>(in, dx, dy, n, stream);
    case GradOp::kDiv:
      return SameShapeBinary<T, DivGrad>(in, dx, dy, n, stream);
    case GradOp::kPow:
      return SameShapeBinary<T, PowGrad>(in, dx, dy, n, stream);
    case GradOp::kMax:
      return SameShapeBinary<T, MaxGrad>(in, dx, dy, n, stream);
    case GradOp::kMin:
      return SameShapeBinary<T, MinGrad>(in, dx, dy, n, stream);
    case GradOp::kWhere:
      return LaunchSameShape(WhereTerm<T, false>{in.condition, in.dout},
                             WhereTerm<T, true>{in.condition, in.dout}, dx, dy,
                             n, stream);
  }
}

template <typename T>
void LaunchBroadcastGrad(const GradInputs<T>& in, bool for_y, T* grad,
                         const BroadcastShape& shape, void* workspace,
                         cudaStream_t stream) {
  switch (in.op) {
    case GradOp::kAdd:
      return ReduceBinary<T, AddGrad>(in, for_y, grad, shape, workspace,
                                      stream);
    case GradOp::kSub:
      return ReduceBinary<T, SubGrad>(in, for_y, grad, shape, workspace,
                                      stream);
    case GradOp::kMul:
      return ReduceBinary<T, MulGrad>(in, for_y, grad, shape, workspace,
                                      stream);
    case GradOp::kDiv:
      return ReduceBinary<T, DivGrad>(in, for_y, grad, shape, workspace,
                                      stream);
    case GradOp::kPow:
      return ReduceBinary<T, PowGrad>(in, for_y, grad, shape, workspace,
                                      stream);
    case GradOp::kMax:
      return ReduceBinary<T, MaxGrad>(in, for_y, grad, shape, workspace,
                                      stream);
    case GradOp::kMin:
      return ReduceBinary<T, MinGrad>(in, for_y, grad, shape, workspace,
                                      stream);
    case GradOp::kWhere:
      if (for_y) {
        return ReduceTerm<T>(WhereTerm<T, true>{in.condition, in.dout}, grad,
                             shape, workspace, stream);
      }
      return ReduceTerm<T>(WhereTerm<T, false>{in.condition, in.dout}, grad,
                           shape, workspace, stream);
  }
}

#define SF_INSTANTIATE_GRAD(T)                                                \
  template void LaunchGradSameShape<T>(const GradInputs<T>&, T*, T*, int64_t, \
                                       cudaStream_t);                         \
  template void LaunchBroadcastGrad<T>(const GradInputs<T>&, bool, T*,        \
                                       const BroadcastShape&, void*,          \
                                       cudaStream_t)

SF_INSTANTIATE_GRAD(float);
SF_INSTANTIATE_GRAD(double);

#undef SF_INSTANTIATE_GRAD

}  // namespace cuda
}  // namespace scopeflow
