// Reductions along the middle axis of [outer, size, inner], with the
// semantics of reduce.cc and argmax.cc. A tensor reduced over several runs
// of axes goes through one such step per run, keeping intermediate results
// in the accumulator's type (double for float sums), so that the result is
// that of one reduction. Three kernels, by shape:
// - rows (inner == 1): a group of up to 32 lanes per row, reduced with
//   shuffles;
// - many or short strided slices: a thread per output;
// - otherwise: a 2-D block per tile of outputs whose y threads split the
//   reduced axis, reduced through shared memory; when the tiles are too few
//   to fill the device, grid.y splits the axis further into chunks whose
//   partial results a second launch reduces.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "operators/reduction/reduce_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

constexpr int kThreads = 256;
// Blocks of kThreads that fill an H100 (132 SMs, 8 such blocks each).
constexpr int64_t kTargetBlocks = 1024;
// Outputs enough to fill an H100 with one thread each.
constexpr int64_t kColumnOutputs = 132 * 2048;
// Rows up to this long stay with a group of lanes, however few they are.
constexpr int64_t kRowsMaxSize = 1024;
// Elements per thread below which splitting a reduced axis does not pay.
constexpr int64_t kMinPerThread = 16;
constexpr int64_t kMaxBlocks = 1 << 20;

template <typename V>
__device__ V ShuffleXor(V v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}

// An argmax candidate: index -1 is no element (the identity).
template <typename T>
struct ArgAcc {
  T value;
  int64_t index;
};

template <typename T>
__device__ ArgAcc<T> ShuffleXor(ArgAcc<T> a, int mask) {
  return {ShuffleXor(a.value, mask), ShuffleXor(a.index, mask)};
}

// A reducer folds Load(element, index along the reduced axis) into an Acc
// with Combine from Identity(). Load also takes an Acc (a partial result),
// unchanged.
template <typename T>
struct SumReducer {
  using Acc =
      std::conditional_t<std::is_floating_point<T>::value, double, uint64_t>;
  __device__ Acc Identity() const { return Acc(0); }
  template <typename In>
  __device__ Acc Load(In v, int64_t) const {
    return static_cast<Acc>(v);
  }
  __device__ Acc Combine(Acc a, Acc b) const { return a + b; }
};

template <typename T>
struct MaxReducer {
  using Acc = T;
  __device__ T Identity() const {
    if constexpr (std::is_floating_point<T>::value) {
      return -T(INFINITY);
    } else {
      return std::numeric_limits<T>::lowest();
    }
  }
  __device__ T Load(T v, int64_t) const { return v; }
  // NaN once either is NaN.
  __device__ T Combine(T a, T b) const { return b != b ? b : (b > a ? b : a); }
};

// The candidate a sequential scan keeps (argmax.h's ArgMaxReplaces): a NaN
// over any number, else the larger value; among equals (or NaNs) the first
// index, or with `last` the last. The order is total, so any tree of
// Combines gives the scan's result.
template <typename T>
struct ArgMaxReducer {
  using Acc = ArgAcc<T>;
  bool last;
  __device__ Acc Identity() const { return {T(0), -1}; }
  __device__ Acc Load(T v, int64_t k) const { return {v, k}; }
  __device__ Acc Load(Acc a, int64_t) const { return a; }
  __device__ Acc Combine(Acc a, Acc b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    const bool a_nan = a.value != a.value;
    const bool b_nan = b.value != b.value;
    if (a_nan != b_nan) return a_nan ? a : b;
    bool b_wins;
    if (a_nan || a.value == b.value) {
      b_wins = last ? b.index > a.index : b.index < a.index;
    } else {
      b_wins = b.value > a.value;
    }
    return b_wins ? b : a;
  }
};

// What a launch stores from its Acc: itself (partial and intermediate
// results), the sum as T, the mean, or the argmax's index.
struct Keep {
  template <typename A>
  __device__ A operator()(A a) const {
    return a;
  }
};
template <typename T>
struct CastTo {
  template <typename A>
  __device__ T operator()(A a) const {
    return static_cast<T>(a);
  }
};
template <typename T>
struct DivideBy {
  double count;
  __device__ T operator()(double sum) const {
    return static_cast<T>(sum / count);
  }
};
struct IndexOf {
  template <typename A>
  __device__ int64_t operator()(A a) const {
    return a.index;
  }
};

// Rows of `size`, `group` (a power of two <= 32) lanes per row.
template <typename In, typename Out, typename R, typename F>
__global__ void __launch_bounds__(kThreads)
    RowsKernel(const In* x, Out* y, int64_t rows, int64_t size, int group, R r,
               F finish) {
  const int lane = threadIdx.x & (group - 1);
  const int per_block = kThreads / group;
  for (int64_t base = int64_t{blockIdx.x} * per_block; base < rows;
       base += int64_t{gridDim.x} * per_block) {
    const int64_t row = base + threadIdx.x / group;
    auto acc = r.Identity();
    if (row < rows) {
      const In* in = x + row * size;
#pragma unroll 4
      for (int64_t k = lane; k < size; k += group) {
        acc = r.Combine(acc, r.Load(in[k], k));
      }
    }
    for (int mask = group / 2; mask > 0; mask /= 2) {
      acc = r.Combine(acc, ShuffleXor(acc, mask));
    }
    if (row < rows && lane == 0) y[row] = finish(acc);
  }
}

// A thread per output of [outer, size, inner].
template <typename In, typename Out, typename R, typename F>
__global__ void ColumnsKernel(const In* x, Out* y, int64_t outer, int64_t size,
                              int64_t inner, R r, F finish) {
  SF_CUDA_GRID_LOOP(j, outer * inner) {
    const int64_t o = j / inner;
    const In* in = x + o * size * inner + (j - o * inner);
    auto acc = r.Identity();
    for (int64_t k = 0; k < size; ++k) {
      acc = r.Combine(acc, r.Load(in[k * inner], k));
    }
    y[j] = finish(acc);
  }
}

// Tiles of blockDim.x outputs of one outer index; the y threads (a power
// of two) split chunk blockIdx.y of the reduced axis, and output
// [o, blockIdx.y, i] of [outer, gridDim.y, inner] gets its result.
template <typename In, typename Out, typename R, typename F>
__global__ void __launch_bounds__(kThreads)
    TilesKernel(const In* x, Out* y, int64_t outer, int64_t size, int64_t inner,
                int64_t chunk, R r, F finish) {
  using Acc = typename R::Acc;
  __shared__ Acc shared[kThreads];
  const int64_t col_tiles = (inner + blockDim.x - 1) / blockDim.x;
  const int64_t begin = blockIdx.y * chunk;
  const int64_t end = begin + chunk < size ? begin + chunk : size;
  const int index = threadIdx.y * blockDim.x + threadIdx.x;
  for (int64_t t = blockIdx.x; t < outer * col_tiles; t += gridDim.x) {
    const int64_t o = t / col_tiles;
    const int64_t i = (t - o * col_tiles) * blockDim.x + threadIdx.x;
    Acc acc = r.Identity();
    if (i < inner) {
      const In* in = x + o * size * inner + i;
      for (int64_t k = begin + threadIdx.y; k < end; k += blockDim.y) {
        acc = r.Combine(acc, r.Load(in[k * inner], k));
      }
    }
    shared[index] = acc;
    for (int s = blockDim.y / 2; s > 0; s /= 2) {
      __syncthreads();
      if (threadIdx.y < s) {
        shared[index] =
            r.Combine(shared[index], shared[index + s * blockDim.x]);
      }
    }
    if (threadIdx.y == 0 && i < inner) {
      y[(o * gridDim.y + blockIdx.y) * inner + i] = finish(shared[index]);
    }
    __syncthreads();  // before the next tile overwrites shared
  }
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t Clamp(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// Which kernel reduces [outer, size, inner], with what launch shape.
struct Launch {
  enum Kind { kRows, kColumns, kTiles } kind = kRows;
  int group = 1;  // kRows
  dim3 block;     // kTiles
  int64_t blocks = 1;
  int64_t splits = 1;  // kTiles: grid.y
  int64_t chunk = 0;   // kTiles: reduced elements per split
};

// A 2-D block for slices `inner` apart: up to 32 outputs side by side
// (coalesced), and as many y threads (a power of two) as the slices can
// use; x widens again when y is short.
dim3 ChooseTile(int64_t size, int64_t inner) {
  const int bx0 = inner < 32 ? static_cast<int>(inner) : 32;
  int by = 1;
  while (by < size && by * 2 * bx0 <= kThreads) by *= 2;
  int64_t bx = kThreads / by;
  if (bx > inner) bx = inner;
  if (bx < bx0) bx = bx0;
  return dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by));
}

Launch Choose(int64_t outer, int64_t size, int64_t inner, bool may_split) {
  Launch launch;
  if (inner == 1) {
    while (launch.group < 32 && launch.group < size) launch.group *= 2;
    const int64_t blocks = CeilDiv(outer, kThreads / launch.group);
    if (size <= kRowsMaxSize || blocks >= kTargetBlocks / 2 || !may_split) {
      launch.blocks = Clamp(blocks, 1, kMaxBlocks);
      return launch;
    }
  } else if (outer * inner >= kColumnOutputs || size <= 32) {
    launch.kind = Launch::kColumns;
    return launch;
  }
  launch.kind = Launch::kTiles;
  launch.block = ChooseTile(size, inner);
  const int64_t tiles = outer * CeilDiv(inner, launch.block.x);
  launch.blocks = Clamp(tiles, 1, kMaxBlocks);
  launch.chunk = size;
  if (may_split && tiles < kTargetBlocks / 2) {
    const int64_t most = size / (launch.block.y * kMinPerThread);
    int64_t splits = CeilDiv(kTargetBlocks, tiles);
    if (splits > most) splits = most;
    if (splits > 1) {
      launch.chunk = CeilDiv(size, splits);
      launch.splits = CeilDiv(size, launch.chunk);
    }
  }
  return launch;
}

template <typename In, typename Out, typename R, typename F>
void LaunchKernel(const Launch& launch, const In* x, Out* y, int64_t outer,
                  int64_t size, int64_t inner, R r, F finish,
                  cudaStream_t stream) {
  switch (launch.kind) {
    case Launch::kRows:
      RowsKernel<<<static_cast<unsigned>(launch.blocks), kThreads, 0, stream>>>(
          x, y, outer, size, launch.group, r, finish);
      break;
    case Launch::kColumns:
      ColumnsKernel<<<CudaBlocks(outer * inner), kCudaThreads, 0, stream>>>(
          x, y, outer, size, inner, r, finish);
      break;
    case Launch::kTiles:
      TilesKernel<<<dim3(static_cast<unsigned>(launch.blocks),
                         static_cast<unsigned>(launch.splits)),
                    launch.block, 0, stream>>>(x, y, outer, size, inner,
                                               launch.chunk, r, finish);
      break;
  }
}

// One step of a plan: in chunks through `partial` if it splits.
template <typename In, typename Out, typename R, typename F>
void RunStep(const ReduceStep& step, const In* x, Out* y,
             typename R::Acc* partial, R r, F finish, cudaStream_t stream) {
  if (step.outer * step.inner == 0) return;
  const Launch launch = Choose(step.outer, step.size, step.inner, true);
  if (launch.splits == 1) {
    LaunchKernel(launch, x, y, step.outer, step.size, step.inner, r, finish,
                 stream);
    return;
  }
  LaunchKernel(launch, x, partial, step.outer, step.size, step.inner, r, Keep(),
               stream);
  LaunchKernel(Choose(step.outer, launch.splits, step.inner, false), partial, y,
               step.outer, launch.splits, step.inner, r, finish, stream);
}

// The steps of `plan`, each reading the previous one's result from a
// workspace buffer; the last writes `out` through `finish`.
template <typename T, typename Out, typename R, typename F>
void RunPlan(const ReducePlan& plan, const T* x, Out* out, R r, F finish,
             void* workspace, cudaStream_t stream) {
  using Acc = typename R::Acc;
  char* base = static_cast<char*>(workspace);
  Acc* buffers[2] = {reinterpret_cast<Acc*>(base),
                     reinterpret_cast<Acc*>(base + plan.buffer_bytes)};
  Acc* partial = reinterpret_cast<Acc*>(base + 2 * plan.buffer_bytes);
  const int steps = static_cast<int>(plan.steps.size());
  for (int j = 0; j < steps; ++j) {
    const ReduceStep& step = plan.steps[j];
    const bool last = j == steps - 1;
    if (j == 0 && last) {
      RunStep(step, x, out, partial, r, finish, stream);
    } else if (j == 0) {
      RunStep(step, x, buffers[0], partial, r, Keep(), stream);
    } else if (last) {
      RunStep(step, buffers[(j - 1) % 2], out, partial, r, finish, stream);
    } else {
      RunStep(step, buffers[(j - 1) % 2], buffers[j % 2], partial, r, Keep(),
              stream);
    }
  }
}

size_t Align(size_t bytes) { return (bytes + 255) / 256 * 256; }

// Steps for `runs`: each reduces the largest reduced run left (its outer
// and inner the products of the runs around it), after which kept runs
// that meet merge.
ReducePlan Plan(ReduceRuns runs, size_t acc_bytes) {
  ReducePlan plan;
  plan.numel = 1;
  for (int64_t size : runs.sizes) plan.numel *= size;
  int64_t largest_partial = 0;
  while (true) {
    int pick = -1;
    for (size_t r = 0; r < runs.sizes.size(); ++r) {
      if (runs.reduced[r] && (pick < 0 || runs.sizes[r] > runs.sizes[pick])) {
        pick = static_cast<int>(r);
      }
    }
    if (pick < 0) break;
    ReduceStep step;
    for (int r = 0; r < pick; ++r) step.outer *= runs.sizes[r];
    step.size = runs.sizes[pick];
    for (size_t r = pick + 1; r < runs.sizes.size(); ++r) {
      step.inner *= runs.sizes[r];
    }
    step.splits = Choose(step.outer, step.size, step.inner, true).splits;
    if (step.splits > 1 && step.outer * step.inner > 0) {
      const int64_t partial = step.outer * step.splits * step.inner;
      if (partial > largest_partial) largest_partial = partial;
    }
    plan.steps.push_back(step);
    runs.sizes.erase(runs.sizes.begin() + pick);
    runs.reduced.erase(runs.reduced.begin() + pick);
    if (pick > 0 && pick < static_cast<int>(runs.sizes.size()) &&
        runs.reduced[pick - 1] == runs.reduced[pick]) {
      runs.sizes[pick - 1] *= runs.sizes[pick];
      runs.sizes.erase(runs.sizes.begin() + pick);
      runs.reduced.erase(runs.reduced.begin() + pick);
    }
  }
  int64_t largest_buffer = 0;
  for (size_t j = 0; j + 1 < plan.steps.size(); ++j) {
    const int64_t results = plan.steps[j].outer * plan.steps[j].inner;
    if (results > largest_buffer) largest_buffer = results;
  }
  plan.buffer_bytes = Align(largest_buffer * acc_bytes);
  plan.partial_bytes = Align(largest_partial * acc_bytes);
  plan.workspace_bytes = 2 * plan.buffer_bytes + plan.partial_bytes;
  return plan;
}

}  // namespace

template <typename T>
ReducePlan PlanReduce(ReduceOp op, const ReduceRuns& runs) {
  return Plan(runs, op == ReduceOp::kMax ? sizeof(T)
                                         : sizeof(typename SumReducer<T>::Acc));
}

template <typename T>
cudaError_t LaunchReduce(ReduceOp op, const ReducePlan& plan, const T* x,
                         T* out, int64_t count, void* workspace,
                         cudaStream_t stream) {
  if (plan.steps.empty()) {
    // Every output is one element: x itself, whatever the op.
    if (plan.numel == 0 || out == x) return cudaSuccess;
    return cudaMemcpyAsync(out, x, plan.numel * sizeof(T),
                           cudaMemcpyDeviceToDevice, stream);
  }
  switch (op) {
    case ReduceOp::kSum:
      RunPlan(plan, x, out, SumReducer<T>(), CastTo<T>(), workspace, stream);
      break;
    case ReduceOp::kMean:
      if constexpr (std::is_floating_point<T>::value) {
        RunPlan(plan, x, out, SumReducer<T>(),
                DivideBy<T>{static_cast<double>(count)}, workspace, stream);
        break;
      }
      return cudaErrorInvalidValue;
    case ReduceOp::kMax:
      RunPlan(plan, x, out, MaxReducer<T>(), Keep(), workspace, stream);
      break;
  }
  return cudaSuccess;
}

ReducePlan PlanArgMax(int64_t outer, int64_t size, int64_t inner) {
  return Plan(ReduceRuns{{outer, size, inner}, {false, true, false}},
              sizeof(ArgAcc<double>));
}

template <typename T>
void LaunchArgMax(const ReducePlan& plan, const T* x, int64_t* out, bool last,
                  void* workspace, cudaStream_t stream) {
  static_assert(sizeof(ArgAcc<T>) <= sizeof(ArgAcc<double>),
                "PlanArgMax sizes the workspace for ArgAcc<double>");
  RunPlan(plan, x, out, ArgMaxReducer<T>{last}, IndexOf(), workspace, stream);
}

#define SF_INSTANTIATE_REDUCE(T)                                              \
  template ReducePlan PlanReduce<T>(ReduceOp, const ReduceRuns&);             \
  template cudaError_t LaunchReduce<T>(ReduceOp, const ReducePlan&, const T*, \
                                       T*, int64_t, void*, cudaStream_t);     \
  template void LaunchArgMax<T>(const ReducePlan&, const T*, int64_t*, bool,  \
                                void*, cudaStream_t)

SF_INSTANTIATE_REDUCE(float);
SF_INSTANTIATE_REDUCE(double);
SF_INSTANTIATE_REDUCE(int32_t);
SF_INSTANTIATE_REDUCE(int64_t);

#undef SF_INSTANTIATE_REDUCE

}  // namespace cuda
}  // namespace scopeflow
