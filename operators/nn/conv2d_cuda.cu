#include <cstdint>

#include "operators/nn/conv2d_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

// The offset of cell (n, c, y, x) of an image of dims `t`.
__device__ __forceinline__ int64_t CellOffset(const Image4d& t, int64_t n,
                                              int64_t c, int64_t y, int64_t x) {
  if (t.channels_last) return ((n * t.h + y) * t.w + x) * t.c + c;
  if (t.block == 1) return ((n * t.c + c) * t.h + y) * t.w + x;
  return (((n * (t.c / t.block) + c / t.block) * t.h + y) * t.w + x) * t.block +
         c % t.block;
}

// Index is the type the cell index is split in: 32-bit division where the
// tensor allows it, being several times faster than 64-bit.
template <typename T, typename Index>
__global__ void CopyWindowKernel(const T* src, Image4d s, T* dst, Image4d d,
                                 int64_t dy, int64_t dx, int64_t total) {
  const Index dc = static_cast<Index>(d.c), dh = static_cast<Index>(d.h),
              dw = static_cast<Index>(d.w), db = static_cast<Index>(d.block);
  const Index d_blocks = dc / db;
  SF_CUDA_GRID_LOOP(i, total) {
    Index r = static_cast<Index>(i);
    Index n, c, y, x;
    if (d.channels_last) {
      c = r % dc;
      r /= dc;
      x = r % dw;
      r /= dw;
      y = r % dh;
      n = r / dh;
    } else {
      // Channel b * block + k lies at [n, b, y, x, k].
      Index k = 0;
      if (db > 1) {
        k = r % db;
        r /= db;
      }
      x = r % dw;
      r /= dw;
      y = r % dh;
      r /= dh;
      c = r % d_blocks * db + k;
      n = r / d_blocks;
    }
    const int64_t sy = static_cast<int64_t>(y) + dy;
    const int64_t sx = static_cast<int64_t>(x) + dx;
    T value = T(0);
    if (sy >= 0 && sy < s.h && sx >= 0 && sx < s.w) {
      value = src[CellOffset(s, n, c, sy, sx)];
    }
    dst[i] = value;
  }
}

// How far the grid's stride moves an element of a ChannelView: in lanes
// (channels within a block), positions within `inner` and channel blocks,
// each below its count.
struct ChannelStep {
  int64_t lane, position, channel_block;
};

// Each thread keeps its element's lane, position and channel block and
// moves them on by the grid's stride, instead of dividing every index.
template <typename T>
__global__ void BiasReluKernel(const T* bias, bool relu, bool accumulate,
                               int64_t total, ChannelView v, ChannelStep step,
                               T* out) {
  const int64_t channel_blocks = v.channels / v.block;
  const int64_t start = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  int64_t lane = start % v.block;
  int64_t position = start / v.block % v.inner;
  int64_t channel_block = start / v.block / v.inner % channel_blocks;
  SF_CUDA_GRID_LOOP(i, total) {
    T value = accumulate ? out[i] : T(0);
    if (bias != nullptr) value += bias[channel_block * v.block + lane];
    // As the CPU kernel: NaN becomes 0.
    if (relu) value = value > T(0) ? value : T(0);
    out[i] = value;
    lane += step.lane;
    position += step.position;
    channel_block += step.channel_block;
    if (lane >= v.block) {
      lane -= v.block;
      ++position;
    }
    if (position >= v.inner) {
      position -= v.inner;
      ++channel_block;
    }
    if (channel_block >= channel_blocks) channel_block -= channel_blocks;
  }
}

// Sum of `value` over the block (of a multiple of 32 threads), valid in
// thread 0.
__device__ double BlockSum(double value) {
  __shared__ double warp_sums[32];
  for (int offset = 16; offset > 0; offset /= 2) {
    value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // The previous call's readers are done before warp_sums is written.
  __syncthreads();
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < static_cast<int>(blockDim.x / 32) ? warp_sums[lane] : 0.0;
    for (int offset = 16; offset > 0; offset /= 2) {
      value += __shfl_down_sync(0xffffffffu, value, offset);
    }
  }
  return value;
}

// view.Rows(): x as rows of outer * inner cells, each cell's channels in
// runs of `block` neighbours (all of them where inner is 1). Blocks of
// 32 x 8 threads, 32 channels side by side (reads of 32 neighbours, or of
// runs of 8 or 16) and 8 rows apart; blockIdx.y picks a range of rows.
template <typename T>
__global__ void RowSumsKernel(const T* x, ChannelView v, double* partial) {
  __shared__ double sums[8][33];
  const int64_t rows = v.outer * v.inner;
  const int64_t per_split = (rows + gridDim.y - 1) / gridDim.y;
  const int64_t begin = blockIdx.y * per_split;
  const int64_t end = begin + per_split < rows ? begin + per_split : rows;
  // Row o * inner + i is cell i of outer index o: a thread moves 8 rows on
  // by these steps rather than dividing each row.
  const int64_t step_outer = 8 / v.inner, step_inner = 8 % v.inner;
  const int64_t outer_stride = v.channels * v.inner;
  for (int64_t tile = blockIdx.x; tile * 32 < v.channels; tile += gridDim.x) {
    const int64_t c = tile * 32 + threadIdx.x;
    const int64_t first = begin + threadIdx.y;
    double sum = 0;
    if (c < v.channels && first < end) {
      const T* channel = x + c / v.block * v.inner * v.block + c % v.block;
      int64_t o = first / v.inner, i = first % v.inner;
      for (int64_t r = first; r < end; r += 8) {
        sum += channel[o * outer_stride + i * v.block];
        o += step_outer;
        i += step_inner;
        if (i >= v.inner) {
          i -= v.inner;
          ++o;
        }
      }
    }
    sums[threadIdx.y][threadIdx.x] = sum;
    __syncthreads();
    if (threadIdx.y == 0 && c < v.channels) {
      for (int k = 1; k < 8; ++k) sum += sums[k][threadIdx.x];
      partial[blockIdx.y * v.channels + c] = sum;
    }
    __syncthreads();
  }
}

// NCHW (not view.Rows()): blockIdx.y picks channels, blockIdx.x a range of
// the channel's outer * inner cells, which the block's threads read in runs
// of `inner` neighbours.
template <typename T>
__global__ void PlaneSumsKernel(const T* x, int64_t outer, int64_t channels,
                                int64_t inner, double* partial) {
  const int64_t total = outer * inner;
  const int64_t per_split = (total + gridDim.x - 1) / gridDim.x;
  const int64_t begin = blockIdx.x * per_split;
  const int64_t end = begin + per_split < total ? begin + per_split : total;
  const int64_t step = blockDim.x;
  const int64_t step_outer = step / inner, step_inner = step % inner;
  for (int64_t c = blockIdx.y; c < channels; c += gridDim.y) {
    double sum = 0;
    int64_t j = begin + threadIdx.x;
    if (j < end) {
      int64_t o = j / inner, i = j % inner;
      for (; j < end; j += step) {
        sum += x[(o * channels + c) * inner + i];
        o += step_outer;
        i += step_inner;
        if (i >= inner) {
          i -= inner;
          ++o;
        }
      }
    }
    sum = BlockSum(sum);
    if (threadIdx.x == 0) partial[blockIdx.x * channels + c] = sum;
  }
}

template <typename T>
__global__ void FinishSumsKernel(const double* partial, int64_t splits,
                                 int64_t channels, T* out) {
  SF_CUDA_GRID_LOOP(c, channels) {
    double sum = 0;
    for (int64_t s = 0; s < splits; ++s) sum += partial[s * channels + c];
    out[c] = static_cast<T>(sum);
  }
}

}  // namespace

template <typename T>
void LaunchCopyWindow(const T* src, const Image4d& src_dims, T* dst,
                      const Image4d& dst_dims, int64_t dy, int64_t dx,
                      cudaStream_t stream) {
  const int64_t total = dst_dims.n * dst_dims.c * dst_dims.h * dst_dims.w;
  if (total == 0) return;
  if (total <= int64_t{UINT32_MAX}) {
    CopyWindowKernel<T, uint32_t>
        <<<CudaBlocks(total), kCudaThreads, 0, stream>>>(
            src, src_dims, dst, dst_dims, dy, dx, total);
  } else {
    CopyWindowKernel<T, uint64_t>
        <<<CudaBlocks(total), kCudaThreads, 0, stream>>>(
            src, src_dims, dst, dst_dims, dy, dx, total);
  }
}

template <typename T>
void LaunchBiasRelu(const T* bias, bool relu, bool accumulate,
                    const ChannelView& view, T* out, cudaStream_t stream) {
  const int64_t total = view.outer * view.channels * view.inner;
  if (total == 0) return;
  const unsigned blocks = CudaBlocks(total);
  const int64_t stride = int64_t{blocks} * kCudaThreads;
  const ChannelStep step{
      stride % view.block, stride / view.block % view.inner,
      stride / view.block / view.inner % (view.channels / view.block)};
  BiasReluKernel<T><<<blocks, kCudaThreads, 0, stream>>>(
      bias, relu, accumulate, total, view, step, out);
}

template <typename T>
void LaunchChannelSums(const T* x, const ChannelView& view, double* partial,
                       T* out, cudaStream_t stream) {
  if (view.channels == 0) return;
  const int64_t splits = ChannelSumSplits(view);
  constexpr int64_t kMaxGrid = 65535;
  if (view.Rows()) {
    const dim3 grid(
        static_cast<unsigned>(std::min((view.channels + 31) / 32, kMaxGrid)),
        static_cast<unsigned>(splits));
    RowSumsKernel<T><<<grid, dim3(32, 8), 0, stream>>>(x, view, partial);
  } else {
    const dim3 grid(static_cast<unsigned>(splits),
                    static_cast<unsigned>(std::min(view.channels, kMaxGrid)));
    PlaneSumsKernel<T><<<grid, kCudaThreads, 0, stream>>>(
        x, view.outer, view.channels, view.inner, partial);
  }
  FinishSumsKernel<T><<<CudaBlocks(view.channels), kCudaThreads, 0, stream>>>(
      partial, splits, view.channels, out);
}

#define SF_INSTANTIATE_CONV2D_CUDA(T)                                       \
  template void LaunchCopyWindow<T>(const T*, const Image4d&, T*,           \
                                    const Image4d&, int64_t, int64_t,       \
                                    cudaStream_t);                          \
  template void LaunchBiasRelu<T>(const T*, bool, bool, const ChannelView&, \
                                  T*, cudaStream_t);                        \
  template void LaunchChannelSums<T>(const T*, const ChannelView&, double*, \
                                     T*, cudaStream_t);

SF_INSTANTIATE_CONV2D_CUDA(float)
SF_INSTANTIATE_CONV2D_CUDA(double)

#undef SF_INSTANTIATE_CONV2D_CUDA

}  // namespace cuda
}  // namespace scopeflow
