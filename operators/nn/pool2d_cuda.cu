#include <cstdint>

#include "operators/nn/pool2d_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;

// Windows of at least this many cells (channels first) are pooled by a warp
// each rather than a thread: global pooling of large planes would otherwise
// leave most of the device idle.
constexpr double kCellsForAWarp = 64;

// The calling thread's index in the grid, and the grid's threads.
template <typename I>
__device__ I GlobalThread() {
  return static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) +
         static_cast<I>(threadIdx.x);
}

template <typename I>
__device__ I GridThreads() {
  return static_cast<I>(blockDim.x) * static_cast<I>(gridDim.x);
}

// PoolGeometry in index type I: int32 where every offset fits, so that the
// kernels' divisions stay cheap.
template <typename I>
struct Shape {
  I planes, channels, in_size, out_size;
  I in[3], out[3], ksize[3], stride[3], dilation[3], pad_before[3],
      pad_after[3];
};

template <typename I>
Shape<I> ShapeOf(const PoolGeometry& g) {
  Shape<I> s;
  s.planes = static_cast<I>(g.planes);
  s.channels = static_cast<I>(g.channels);
  for (int a = 0; a < 3; ++a) {
    s.in[a] = static_cast<I>(g.in[a]);
    s.out[a] = static_cast<I>(g.out[a]);
    s.ksize[a] = static_cast<I>(g.ksize[a]);
    s.stride[a] = static_cast<I>(g.stride[a]);
    s.dilation[a] = static_cast<I>(g.dilation[a]);
    s.pad_before[a] = static_cast<I>(g.pad_before[a]);
    s.pad_after[a] = static_cast<I>(g.pad_after[a]);
  }
  s.in_size = s.in[0] * s.in[1] * s.in[2];
  s.out_size = s.out[0] * s.out[1] * s.out[2];
  return s;
}

// Whether every offset and window bound of `g` fits in int32 with room to
// spare (a grid-stride loop steps past its end before it stops).
bool FitsInt32(const PoolGeometry& g) {
  constexpr int64_t kLimit = int64_t{1} << 30;
  const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_size = g.out[0] * g.out[1] * g.out[2];
  if (g.planes * g.channels * in_size > kLimit) return false;
  // A warp's lanes per window.
  if (g.planes * g.channels * out_size > kLimit / 32) return false;
  for (int a = 0; a < 3; ++a) {
    if (g.out[a] * g.stride[a] + g.in[a] + g.pad_before[a] + g.pad_after[a] >
        kLimit) {
      return false;
    }
    if ((g.ksize[a] - 1) * g.dilation[a] + 1 > kLimit) return false;
  }
  return true;
}

// The input cells a window takes along one axis, as pool::TapsOf gives
// them: `count` cells from `first` on, a dilation apart, and `padded`, its
// cells on the input or the padding.
template <typename I>
struct Taps {
  I first, count, padded;
};

template <typename I>
__device__ Taps<I> TapsAt(const Shape<I>& s, int a, I o) {
  const I ksize = s.ksize[a];
  const I step = s.dilation[a];
  const I start = o * s.stride[a] - s.pad_before[a];
  // The taps landing before cell `limit`, at most ksize.
  const auto before = [&](I limit) -> I {
    if (start >= limit) return 0;
    const I taps = (limit - 1 - start) / step + 1;
    return taps < ksize ? taps : ksize;
  };
  const I begin = start >= 0 ? 0 : (-start + step - 1) / step;
  const I count = before(s.in[a]) - begin;
  return Taps<I>{start + begin * step, count > 0 ? count : 0,
                 before(s.in[a] + s.pad_after[a])};
}

// Calls fn(cell) (the offset in the plane) for the cells of the window with
// taps td, th, tw that lane `lane` of kLanes takes, in row-major order.
template <int kLanes, typename I, typename Fn>
__device__ void ForEachCell(const Shape<I>& s, const Taps<I>& td,
                            const Taps<I>& th, const Taps<I>& tw, int lane,
                            Fn fn) {
  if constexpr (kLanes == 1) {
    for (I i = 0; i < td.count; ++i) {
      const I d = td.first + i * s.dilation[0];
      for (I j = 0; j < th.count; ++j) {
        const I row =
            (d * s.in[1] + th.first + j * s.dilation[1]) * s.in[2] + tw.first;
        for (I k = 0; k < tw.count; ++k) fn(row + k * s.dilation[2]);
      }
    }
  } else {
    const I plane_cells = th.count * tw.count;
    const I total = td.count * plane_cells;
    for (I t = lane; t < total; t += kLanes) {
      const I i = t / plane_cells;
      const I r = t - i * plane_cells;
      const I j = r / tw.count;
      const I k = r - j * tw.count;
      fn(((td.first + i * s.dilation[0]) * s.in[1] + th.first +
          j * s.dilation[1]) *
             s.in[2] +
         tw.first + k * s.dilation[2]);
    }
  }
}

// The cell whose value max pooling keeps, as the CPU kernel picks it: the
// last NaN if the window holds any, else the first maximum. Fed cells in
// increasing order, one lane's share of a window; lanes merge their states
// in any order.
template <typename T, typename I>
struct MaxState {
  I nan_cell = -1;
  I max_cell = -1;
  T max_value = T(0);

  __device__ void Take(T v, I cell) {
    if (v != v) {
      nan_cell = cell;
    } else if (max_cell < 0 || v > max_value) {
      max_cell = cell;
      max_value = v;
    }
  }
  __device__ void Merge(const MaxState& o) {
    if (o.nan_cell > nan_cell) nan_cell = o.nan_cell;
    if (o.max_cell >= 0 &&
        (max_cell < 0 || o.max_value > max_value ||
         (o.max_value == max_value && o.max_cell < max_cell))) {
      max_cell = o.max_cell;
      max_value = o.max_value;
    }
  }
  __device__ I Best() const { return nan_cell >= 0 ? nan_cell : max_cell; }
};

// A cell's offset with the spatial axes in column-major order (the first
// fastest), as ONNX's storage_order = 1 numbers them.
template <typename I>
__device__ I ColumnMajor(const Shape<I>& s, I cell) {
  const I w = cell % s.in[2];
  const I h = cell / s.in[2] % s.in[1];
  const I d = cell / (s.in[2] * s.in[1]);
  return d + s.in[0] * (h + s.in[1] * w);
}

// What average pooling divides a window's sum by (an int64, as the CPU
// kernel converts it).
template <typename I>
__device__ int64_t AverageCount(const Taps<I>& td, const Taps<I>& th,
                                const Taps<I>& tw, bool exclusive) {
  return exclusive ? int64_t{td.count} * th.count * tw.count
                   : int64_t{td.padded} * th.padded * tw.padded;
}

// One window (and channel) per group of kLanes threads: Out, and for max
// pooling, where not null, Indices and the maximum's cell (`argmax`).
// Windows are numbered as Out's elements. With kLanes == 1 average pooling
// sums in the CPU kernel's order.
template <typename T, typename I, int kLanes>
__global__ void PoolKernel(Shape<I> s, PoolOptions options, const T* x, T* out,
                           int64_t* indices, I* argmax, I windows) {
  const int lane = kLanes == 1 ? 0 : threadIdx.x % kLanes;
  const I step = GridThreads<I>() / kLanes;
  for (I o = GlobalThread<I>() / kLanes; o < windows; o += step) {
    const I c = o % s.channels;
    I rest = o / s.channels;
    const I w = rest % s.out[2];
    rest /= s.out[2];
    const I h = rest % s.out[1];
    rest /= s.out[1];
    const I d = rest % s.out[0];
    const I plane = rest / s.out[0];
    const Taps<I> td = TapsAt(s, 0, d);
    const Taps<I> th = TapsAt(s, 1, h);
    const Taps<I> tw = TapsAt(s, 2, w);
    const T* in = x + plane * s.in_size * s.channels + c;
    if (options.is_max) {
      MaxState<T, I> m;
      ForEachCell<kLanes>(s, td, th, tw, lane,
                          [&](I cell) { m.Take(in[cell * s.channels], cell); });
      if constexpr (kLanes > 1) {
        for (int offset = kLanes / 2; offset > 0; offset /= 2) {
          MaxState<T, I> other;
          other.nan_cell = __shfl_xor_sync(kFullMask, m.nan_cell, offset);
          other.max_cell = __shfl_xor_sync(kFullMask, m.max_cell, offset);
          other.max_value = __shfl_xor_sync(kFullMask, m.max_value, offset);
          m.Merge(other);
        }
      }
      if (lane != 0) continue;
      const I best = m.Best();
      if (out != nullptr) out[o] = in[best * s.channels];
      if (argmax != nullptr) argmax[o] = best;
      if (indices != nullptr) {
        indices[o] = int64_t{plane} * s.in_size +
                     (options.column_major ? ColumnMajor(s, best) : best);
      }
    } else {
      T sum = 0;
      ForEachCell<kLanes>(s, td, th, tw, lane,
                          [&](I cell) { sum += in[cell * s.channels]; });
      if constexpr (kLanes > 1) {
        for (int offset = kLanes / 2; offset > 0; offset /= 2) {
          sum += __shfl_xor_sync(kFullMask, sum, offset);
        }
      }
      if (lane != 0) continue;
      out[o] =
          sum / static_cast<T>(AverageCount(td, th, tw, options.exclusive));
    }
  }
}

// The output indices along axis `a` whose windows' extents cover input
// coordinate `x`: [lo, hi]. The windows that take it are those of them
// whose start lies a multiple of the dilation before it.
template <typename I>
__device__ void WindowsCovering(const Shape<I>& s, int a, I x, I& lo, I& hi) {
  const I base = x + s.pad_before[a];
  const I low = base - (s.ksize[a] - 1) * s.dilation[a];
  lo = low <= 0 ? 0 : (low + s.stride[a] - 1) / s.stride[a];
  hi = base / s.stride[a];
  if (hi > s.out[a] - 1) hi = s.out[a] - 1;
}

template <typename I>
__device__ bool Takes(const Shape<I>& s, int a, I x, I o) {
  return (x + s.pad_before[a] - o * s.stride[a]) % s.dilation[a] == 0;
}

// One input element per thread gathers the gradient of the windows that
// take it, in the order of the windows, as the CPU kernel adds them up: to
// max pooling's maxima (`argmax`), or each window's share of average
// pooling.
template <typename T, typename I>
__global__ void PoolGradKernel(Shape<I> s, PoolOptions options,
                               const T* out_grad, const I* argmax, T* x_grad,
                               I n) {
  const I step = GridThreads<I>();
  for (I e = GlobalThread<I>(); e < n; e += step) {
    const I c = e % s.channels;
    const I rest = e / s.channels;
    const I cell = rest % s.in_size;
    const I plane = rest / s.in_size;
    const I x[3] = {cell / (s.in[2] * s.in[1]), cell / s.in[2] % s.in[1],
                    cell % s.in[2]};
    I lo[3], hi[3];
    for (int a = 0; a < 3; ++a) WindowsCovering(s, a, x[a], lo[a], hi[a]);
    T sum = 0;
    for (I od = lo[0]; od <= hi[0]; ++od) {
      if (!Takes(s, 0, x[0], od)) continue;
      const Taps<I> td = TapsAt(s, 0, od);
      for (I oh = lo[1]; oh <= hi[1]; ++oh) {
        if (!Takes(s, 1, x[1], oh)) continue;
        const Taps<I> th = TapsAt(s, 1, oh);
        for (I ow = lo[2]; ow <= hi[2]; ++ow) {
          if (!Takes(s, 2, x[2], ow)) continue;
          const I o = ((plane * s.out[0] + od) * s.out[1] + oh) * s.out[2] + ow;
          const I at = o * s.channels + c;
          if (options.is_max) {
            if (argmax[at] == cell) sum += out_grad[at];
          } else {
            const Taps<I> tw = TapsAt(s, 2, ow);
            sum += out_grad[at] /
                   static_cast<T>(AverageCount(td, th, tw, options.exclusive));
          }
        }
      }
    }
    x_grad[e] = sum;
  }
}

template <typename T, typename I>
void Pool(const PoolGeometry& g, const PoolOptions& options, const T* x, T* out,
          int64_t* indices, I* argmax, cudaStream_t stream) {
  const Shape<I> s = ShapeOf<I>(g);
  const I windows = s.planes * s.out_size * s.channels;
  if (windows == 0) return;
  const double cells =
      static_cast<double>(g.ksize[0]) * g.ksize[1] * g.ksize[2];
  if (g.channels == 1 && cells >= kCellsForAWarp) {
    PoolKernel<T, I, 32>
        <<<CudaBlocks(int64_t{windows} * 32), kCudaThreads, 0, stream>>>(
            s, options, x, out, indices, argmax, windows);
  } else {
    PoolKernel<T, I, 1><<<CudaBlocks(windows), kCudaThreads, 0, stream>>>(
        s, options, x, out, indices, argmax, windows);
  }
}

template <typename T, typename I>
void PoolGrad(const PoolGeometry& g, const PoolOptions& options, const T* x,
              const T* out_grad, T* x_grad, void* scratch,
              cudaStream_t stream) {
  const Shape<I> s = ShapeOf<I>(g);
  const I n = s.planes * s.in_size * s.channels;
  if (n == 0) return;
  I* argmax = static_cast<I*>(scratch);
  if (options.is_max) {
    Pool<T, I>(g, options, x, nullptr, nullptr, argmax, stream);
  }
  PoolGradKernel<T, I><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
      s, options, out_grad, argmax, x_grad, n);
}

}  // namespace

template <typename T>
void LaunchPool(const PoolGeometry& g, const PoolOptions& options, const T* x,
                T* out, int64_t* indices, cudaStream_t stream) {
  if (FitsInt32(g)) {
    Pool<T, int32_t>(g, options, x, out, indices, nullptr, stream);
  } else {
    Pool<T, int64_t>(g, options, x, out, indices, nullptr, stream);
  }
}

size_t PoolGradScratchBytes(const PoolGeometry& g, const PoolOptions& options) {
  if (!options.is_max) return 0;
  return static_cast<size_t>(g.planes * g.channels * g.out[0] * g.out[1] *
                             g.out[2]) *
         sizeof(int64_t);
}

template <typename T>
void LaunchPoolGrad(const PoolGeometry& g, const PoolOptions& options,
                    const T* x, const T* out_grad, T* x_grad, void* scratch,
                    cudaStream_t stream) {
  if (FitsInt32(g)) {
    PoolGrad<T, int32_t>(g, options, x, out_grad, x_grad, scratch, stream);
  } else {
    PoolGrad<T, int64_t>(g, options, x, out_grad, x_grad, scratch, stream);
  }
}

template void LaunchPool<float>(const PoolGeometry&, const PoolOptions&,
                                const float*, float*, int64_t*, cudaStream_t);
template void LaunchPool<double>(const PoolGeometry&, const PoolOptions&,
                                 const double*, double*, int64_t*,
                                 cudaStream_t);
template void LaunchPoolGrad<float>(const PoolGeometry&, const PoolOptions&,
                                    const float*, const float*, float*, void*,
                                    cudaStream_t);
template void LaunchPoolGrad<double>(const PoolGeometry&, const PoolOptions&,
                                     const double*, const double*, double*,
                                     void*, cudaStream_t);

}  // namespace cuda
}  // namespace scopeflow
