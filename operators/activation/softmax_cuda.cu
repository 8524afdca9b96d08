// softmax, log_softmax and their gradients along the middle axis of
// [outer, size, inner], with the semantics of softmax.cc: each slice is
// shifted by its maximum before exp, and a NaN anywhere in a slice makes
// the whole slice NaN. Three kernels, by shape:
// - rows (inner == 1) of at most kWarpMaxSize elements: a group of up to
//   32 lanes per row holding the row in registers, reduced with shuffles;
// - many or short strided slices: a thread per slice, looping along it
//   (neighbouring threads read neighbouring elements);
// - otherwise, long rows or strided slices: a 2-D block per tile of
//   slices, its y threads splitting each slice and reducing through
//   shared memory.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "operators/activation/softmax_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpMaxSize = 1024;
// Slices enough to fill an H100 with one thread each (132 SMs, 2048
// threads per SM).
constexpr int64_t kColumnSlices = 132 * 2048;
constexpr int64_t kMaxBlocks = 1 << 20;

__device__ inline float Exp(float x) { return expf(x); }
__device__ inline double Exp(double x) { return exp(x); }
__device__ inline float Log(float x) { return logf(x); }
__device__ inline double Log(double x) { return log(x); }
__device__ inline float Mul(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double Mul(double a, double b) { return __dmul_rn(a, b); }

template <typename T>
__device__ T NegInf() {
  return -T(INFINITY);
}

// The larger of a and b, NaN if either is: the slice's result is NaN then
// anyway, and a NaN maximum makes every lane agree on it.
template <typename T>
__device__ T Max(T a, T b) {
  return (a != a || b <= a) ? a : b;
}

template <typename T>
__device__ T ShuffleXor(T v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}

struct MaxOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return Max(a, b);
  }
};
struct AddOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};

// Reduces v over the lanes of a group of `group` (a power of two <= 32)
// aligned lanes; every lane gets the result.
template <typename T, typename Op>
__device__ T GroupReduce(T v, int group, Op op) {
  for (int mask = group / 2; mask > 0; mask /= 2) {
    v = op(v, ShuffleXor(v, mask));
  }
  return v;
}

// Reduces v over threadIdx.y (blockDim.y a power of two) for each
// threadIdx.x; every thread gets its column's result. `shared` holds
// blockDim.x * blockDim.y elements.
template <typename T, typename Op>
__device__ T ColumnReduce(T v, T* shared, Op op) {
  const int index = threadIdx.y * blockDim.x + threadIdx.x;
  shared[index] = v;
  for (int s = blockDim.y / 2; s > 0; s /= 2) {
    __syncthreads();
    if (threadIdx.y < s) {
      shared[index] = op(shared[index], shared[index + s * blockDim.x]);
    }
  }
  __syncthreads();
  const T result = shared[threadIdx.x];
  __syncthreads();  // before the next call overwrites shared
  return result;
}

// log(sum) - (x_label - max), or NaN for a label outside [0, classes).
template <typename T>
__device__ T CrossEntropy(T sum, T max, T x_label, bool valid) {
  return valid ? Log(sum) - (x_label - max) : T(NAN);
}

// Rows of `size` <= kPer * group elements, `group` lanes per row: lane l
// holds elements l, l + group, ... in registers. With `loss`, also the
// cross entropy of each row against labels.
template <typename T, int kPer, bool kLog>
__global__ void __launch_bounds__(kThreads)
    WarpSoftmaxKernel(const T* x, T* y, const int64_t* labels, T* loss,
                      int64_t rows, int size, int group) {
  const int lane = threadIdx.x & (group - 1);
  const int per_block = kThreads / group;
  for (int64_t base = int64_t{blockIdx.x} * per_block; base < rows;
       base += int64_t{gridDim.x} * per_block) {
    const int64_t row = base + threadIdx.x / group;
    const bool active = row < rows;
    const T* in = x + (active ? row : 0) * size;
    T v[kPer];
    T max = NegInf<T>();
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int k = lane + j * group;
      v[j] = active && k < size ? in[k] : NegInf<T>();
      max = Max(max, v[j]);
    }
    max = GroupReduce(max, group, MaxOp());
    T sum = 0;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      if (lane + j * group < size) {
        const T e = Exp(v[j] - max);
        if (!kLog) v[j] = e;
        sum += e;
      }
    }
    // The label's logit is read before any lane writes, in case y is x.
    int64_t label = 0;
    T x_label = 0;
    if (loss != nullptr && active && lane == 0) {
      label = labels[row];
      if (label >= 0 && label < size) x_label = in[label];
    }
    sum = GroupReduce(sum, group, AddOp());
    if (!active) continue;
    T* out = y + row * size;
    if (kLog) {
      const T log_sum = Log(sum);
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        const int k = lane + j * group;
        if (k < size) out[k] = (v[j] - max) - log_sum;
      }
    } else {
      const T scale = T(1) / sum;
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        const int k = lane + j * group;
        if (k < size) out[k] = v[j] * scale;
      }
    }
    if (loss != nullptr && lane == 0) {
      loss[row] = CrossEntropy(sum, max, x_label, label >= 0 && label < size);
    }
  }
}

// Tiles of blockDim.x slices of one outer index; the y threads split each
// slice. With `loss` (inner == 1), the cross entropy of each row.
template <typename T, bool kLog>
__global__ void __launch_bounds__(kThreads)
    TileSoftmaxKernel(const T* x, T* y, const int64_t* labels, T* loss,
                      int64_t outer, int64_t size, int64_t inner) {
  __shared__ T shared[kThreads];
  const int64_t col_tiles = (inner + blockDim.x - 1) / blockDim.x;
  for (int64_t t = blockIdx.x; t < outer * col_tiles; t += gridDim.x) {
    const int64_t o = t / col_tiles;
    const int64_t i = (t - o * col_tiles) * blockDim.x + threadIdx.x;
    const bool active = i < inner;
    const T* in = x + o * size * inner + (active ? i : 0);
    const bool first = threadIdx.x == 0 && threadIdx.y == 0;
    int64_t label = 0;
    T x_label = 0;
    if (loss != nullptr && first) {
      label = labels[o];
      if (label >= 0 && label < size) x_label = in[label];
    }
    T max = NegInf<T>();
    if (active) {
      for (int64_t k = threadIdx.y; k < size; k += blockDim.y) {
        max = Max(max, in[k * inner]);
      }
    }
    max = ColumnReduce(max, shared, MaxOp());
    T sum = 0;
    if (active) {
      for (int64_t k = threadIdx.y; k < size; k += blockDim.y) {
        sum += Exp(in[k * inner] - max);
      }
    }
    sum = ColumnReduce(sum, shared, AddOp());
    if (active) {
      T* out = y + o * size * inner + i;
      if (kLog) {
        const T log_sum = Log(sum);
        for (int64_t k = threadIdx.y; k < size; k += blockDim.y) {
          out[k * inner] = (in[k * inner] - max) - log_sum;
        }
      } else {
        const T scale = T(1) / sum;
        for (int64_t k = threadIdx.y; k < size; k += blockDim.y) {
          out[k * inner] = Exp(in[k * inner] - max) * scale;
        }
      }
    }
    if (loss != nullptr && first) {
      loss[o] = CrossEntropy(sum, max, x_label, label >= 0 && label < size);
    }
  }
}

// One thread per strided slice (inner > 1).
template <typename T, bool kLog>
__global__ void ColumnSoftmaxKernel(const T* x, T* y, int64_t outer,
                                    int64_t size, int64_t inner) {
  SF_CUDA_GRID_LOOP(j, outer * inner) {
    const int64_t o = j / inner;
    const int64_t offset = o * size * inner + (j - o * inner);
    const T* in = x + offset;
    T* out = y + offset;
    T max = NegInf<T>();
    for (int64_t k = 0; k < size; ++k) max = Max(max, in[k * inner]);
    T sum = 0;
    for (int64_t k = 0; k < size; ++k) sum += Exp(in[k * inner] - max);
    if (kLog) {
      const T log_sum = Log(sum);
      for (int64_t k = 0; k < size; ++k) {
        out[k * inner] = (in[k * inner] - max) - log_sum;
      }
    } else {
      const T scale = T(1) / sum;
      for (int64_t k = 0; k < size; ++k) {
        out[k * inner] = Exp(in[k * inner] - max) * scale;
      }
    }
  }
}

// The gradient element: softmax's y (g - dot), log_softmax's
// g - exp(y) sum.
template <typename T, bool kLog>
__device__ T GradOf(T y, T g, T reduced) {
  return kLog ? g - Mul(Exp(y), reduced) : y * (g - reduced);
}

// What the gradient reduces: g y (softmax) or g (log_softmax).
template <typename T, bool kLog>
__device__ T GradTerm(T y, T g) {
  return kLog ? g : g * y;
}

template <typename T, int kPer, bool kLog>
__global__ void __launch_bounds__(kThreads)
    WarpSoftmaxGradKernel(const T* y, const T* g, T* dx, int64_t rows, int size,
                          int group) {
  const int lane = threadIdx.x & (group - 1);
  const int per_block = kThreads / group;
  for (int64_t base = int64_t{blockIdx.x} * per_block; base < rows;
       base += int64_t{gridDim.x} * per_block) {
    const int64_t row = base + threadIdx.x / group;
    const bool active = row < rows;
    const int64_t offset = (active ? row : 0) * size;
    T y_row[kPer];
    T g_row[kPer];
    T reduced = 0;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int k = lane + j * group;
      const bool in = active && k < size;
      y_row[j] = in ? y[offset + k] : T(0);
      g_row[j] = in ? g[offset + k] : T(0);
      if (in) reduced += GradTerm<T, kLog>(y_row[j], g_row[j]);
    }
    reduced = GroupReduce(reduced, group, AddOp());
    if (!active) continue;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int k = lane + j * group;
      if (k < size) {
        dx[offset + k] = GradOf<T, kLog>(y_row[j], g_row[j], reduced);
      }
    }
  }
}

template <typename T, bool kLog>
__global__ void __launch_bounds__(kThreads)
    TileSoftmaxGradKernel(const T* y, const T* g, T* dx, int64_t outer,
                          int64_t size, int64_t inner) {
  __shared__ T shared[kThreads];
  const int64_t col_tiles = (inner + blockDim.x - 1) / blockDim.x;
  for (int64_t t = blockIdx.x; t < outer * col_tiles; t += gridDim.x) {
    const int64_t o = t / col_tiles;
    const int64_t i = (t - o * col_tiles) * blockDim.x + threadIdx.x;
    const bool active = i < inner;
    const int64_t offset = o * size * inner + (active ? i : 0);
    T reduced = 0;
    if (active) {
      for (int64_t k = threadIdx.y; k < size; k += blockDim.y) {
        reduced +=
            GradTerm<T, kLog>(y[offset + k * inner], g[offset + k * inner]);
      }
    }
    reduced = ColumnReduce(reduced, shared, AddOp());
    if (!active) continue;
    for (int64_t k = threadIdx.y; k < size; k += blockDim.y) {
      const int64_t e = offset + k * inner;
      dx[e] = GradOf<T, kLog>(y[e], g[e], reduced);
    }
  }
}

template <typename T, bool kLog>
__global__ void ColumnSoftmaxGradKernel(const T* y, const T* g, T* dx,
                                        int64_t outer, int64_t size,
                                        int64_t inner) {
  SF_CUDA_GRID_LOOP(j, outer * inner) {
    const int64_t o = j / inner;
    const int64_t offset = o * size * inner + (j - o * inner);
    T reduced = 0;
    for (int64_t k = 0; k < size; ++k) {
      reduced +=
          GradTerm<T, kLog>(y[offset + k * inner], g[offset + k * inner]);
    }
    for (int64_t k = 0; k < size; ++k) {
      const int64_t e = offset + k * inner;
      dx[e] = GradOf<T, kLog>(y[e], g[e], reduced);
    }
  }
}

unsigned Blocks(int64_t units, int64_t per_block) {
  const int64_t blocks = (units + per_block - 1) / per_block;
  return static_cast<unsigned>(
      blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

// The lanes per row and elements per lane of a row of `size` <=
// kWarpMaxSize: a power of two of each.
struct WarpShape {
  int group = 1;
  int per = 1;
};

WarpShape ChooseWarpShape(int64_t size) {
  WarpShape shape;
  while (shape.group < 32 && shape.group < size) shape.group *= 2;
  while (shape.group * shape.per < size) shape.per *= 2;
  return shape;
}

// Calls fn(std::integral_constant<int, per>) for per in 1, 2, ..., 32.
template <typename Fn>
void WithPer(int per, Fn fn) {
  switch (per) {
    case 1:
      return fn(std::integral_constant<int, 1>());
    case 2:
      return fn(std::integral_constant<int, 2>());
    case 4:
      return fn(std::integral_constant<int, 4>());
    case 8:
      return fn(std::integral_constant<int, 8>());
    case 16:
      return fn(std::integral_constant<int, 16>());
    default:
      return fn(std::integral_constant<int, 32>());
  }
}

// A 2-D block for slices of `size` elements `inner` apart: up to 32
// slices side by side (blockDim.x, coalesced), and as many y threads per
// slice (a power of two) as the slice can use; x widens again when y is
// short.
dim3 ChooseTile(int64_t size, int64_t inner) {
  const int bx0 = inner < 32 ? static_cast<int>(inner) : 32;
  int by = 1;
  while (by < size && by * 2 * bx0 <= kThreads) by *= 2;
  int64_t bx = kThreads / by;
  if (bx > inner) bx = inner;
  if (bx < bx0) bx = bx0;
  return dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by));
}

// Whether a thread per slice suits strided slices (inner > 1): enough
// slices to fill the device, or slices too short to split.
bool ThreadPerSlice(int64_t outer, int64_t size, int64_t inner) {
  return outer * inner >= kColumnSlices || size <= 32;
}

template <typename T, bool kLog>
void Softmax(const T* x, T* y, const int64_t* labels, T* loss, int64_t outer,
             int64_t size, int64_t inner, cudaStream_t stream) {
  if (outer == 0 || size == 0 || inner == 0) return;
  if (inner == 1 && size <= kWarpMaxSize) {
    const WarpShape shape = ChooseWarpShape(size);
    const unsigned blocks = Blocks(outer, kThreads / shape.group);
    WithPer(shape.per, [&](auto per) {
      WarpSoftmaxKernel<T, decltype(per)::value, kLog>
          <<<blocks, kThreads, 0, stream>>>(
              x, y, labels, loss, outer, static_cast<int>(size), shape.group);
    });
  } else if (inner > 1 && ThreadPerSlice(outer, size, inner)) {
    ColumnSoftmaxKernel<T, kLog>
        <<<CudaBlocks(outer * inner), kCudaThreads, 0, stream>>>(x, y, outer,
                                                                 size, inner);
  } else {
    const dim3 block = ChooseTile(size, inner);
    const unsigned blocks =
        Blocks(outer * ((inner + block.x - 1) / block.x), 1);
    TileSoftmaxKernel<T, kLog>
        <<<blocks, block, 0, stream>>>(x, y, labels, loss, outer, size, inner);
  }
}

template <typename T, bool kLog>
void SoftmaxGrad(const T* y, const T* g, T* dx, int64_t outer, int64_t size,
                 int64_t inner, cudaStream_t stream) {
  if (outer == 0 || size == 0 || inner == 0) return;
  if (inner == 1 && size <= kWarpMaxSize) {
    const WarpShape shape = ChooseWarpShape(size);
    const unsigned blocks = Blocks(outer, kThreads / shape.group);
    WithPer(shape.per, [&](auto per) {
      WarpSoftmaxGradKernel<T, decltype(per)::value, kLog>
          <<<blocks, kThreads, 0, stream>>>(
              y, g, dx, outer, static_cast<int>(size), shape.group);
    });
  } else if (inner > 1 && ThreadPerSlice(outer, size, inner)) {
    ColumnSoftmaxGradKernel<T, kLog>
        <<<CudaBlocks(outer * inner), kCudaThreads, 0, stream>>>(
            y, g, dx, outer, size, inner);
  } else {
    const dim3 block = ChooseTile(size, inner);
    const unsigned blocks =
        Blocks(outer * ((inner + block.x - 1) / block.x), 1);
    TileSoftmaxGradKernel<T, kLog>
        <<<blocks, block, 0, stream>>>(y, g, dx, outer, size, inner);
  }
}

}  // namespace

template <typename T>
void LaunchSoftmax(bool log, const T* x, T* y, int64_t outer, int64_t size,
                   int64_t inner, cudaStream_t stream) {
  if (log) {
    Softmax<T, true>(x, y, nullptr, nullptr, outer, size, inner, stream);
  } else {
    Softmax<T, false>(x, y, nullptr, nullptr, outer, size, inner, stream);
  }
}

template <typename T>
void LaunchSoftmaxGrad(bool log, const T* y, const T* g, T* dx, int64_t outer,
                       int64_t size, int64_t inner, cudaStream_t stream) {
  if (log) {
    SoftmaxGrad<T, true>(y, g, dx, outer, size, inner, stream);
  } else {
    SoftmaxGrad<T, false>(y, g, dx, outer, size, inner, stream);
  }
}

template <typename T>
void LaunchSoftmaxCrossEntropy(const T* x, const int64_t* labels, T* softmax,
                               T* loss, int64_t rows, int64_t classes,
                               cudaStream_t stream) {
  Softmax<T, false>(x, softmax, labels, loss, rows, classes, 1, stream);
}

#define SF_INSTANTIATE_SOFTMAX(T)                                              \
  template void LaunchSoftmax<T>(bool, const T*, T*, int64_t, int64_t,         \
                                 int64_t, cudaStream_t);                       \
  template void LaunchSoftmaxGrad<T>(bool, const T*, const T*, T*, int64_t,    \
                                     int64_t, int64_t, cudaStream_t);          \
  template void LaunchSoftmaxCrossEntropy<T>(const T*, const int64_t*, T*, T*, \
                                             int64_t, int64_t, cudaStream_t)

SF_INSTANTIATE_SOFTMAX(float);
SF_INSTANTIATE_SOFTMAX(double);

#undef SF_INSTANTIATE_SOFTMAX

}  // namespace cuda
}  // namespace scopeflow
