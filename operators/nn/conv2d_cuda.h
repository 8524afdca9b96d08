// Launchers of the kernels around conv2d's cuDNN calls (conv2d_cuda.cu):
// layout changes (NCHW, NHWC, NCHW8c, NCHW16c) and padding, bias and relu, and
// the bias gradient. Plain C++ and CUDA runtime types only, so both nvcc and
// the C++ compiler read it.
#ifndef SCOPEFLOW_OPERATORS_NN_CONV2D_CUDA_H_
#define SCOPEFLOW_OPERATORS_NN_CONV2D_CUDA_H_

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

namespace scopeflow {
namespace cuda {

// An image's dims in [N, C, H, W] order whatever its layout, and its
// layout: NHWC where channels_last; otherwise [N, C / block, H, W, block]
// (block 1: NCHW; 8: NCHW8c; 16: NCHW16c), c a multiple of block.
struct Image4d {
  int64_t n = 0, c = 0, h = 0, w = 0;
  bool channels_last = false;
  int64_t block = 1;
};

// A tensor as [outer, channels / block, inner, block], channel b * block + k
// at [:, b, :, k], for the per-channel bias and its gradient: NCHW is
// [N, C, H * W] (block 1), NHWC [N * H * W, C, 1], NCHW8c and NCHW16c
// [N, C, H * W] with block 8 and 16.
struct ChannelView {
  int64_t outer = 0, channels = 0, inner = 0, block = 1;

  // Whether LaunchChannelSums reads it as rows of neighbouring channels
  // (runs of `block` channels side by side), rather than channel planes.
  bool Rows() const { return inner == 1 || block > 1; }
};

// dst[n, c, y, x] = src[n, c, y + dy, x + dx] where that cell lies in src,
// otherwise 0, for every cell of dst: pads (negative offsets), crops
// (positive ones) and changes layout, alone or together. src and dst have
// the same n and c.
template <typename T>
void LaunchCopyWindow(const T* src, const Image4d& src_dims, T* dst,
                      const Image4d& dst_dims, int64_t dy, int64_t dx,
                      cudaStream_t stream);

// Over out as `view`: out = (accumulate ? out : 0) + bias[channel] (no
// bias where null), then max(out, 0) where `relu`.
template <typename T>
void LaunchBiasRelu(const T* bias, bool relu, bool accumulate,
                    const ChannelView& view, T* out, cudaStream_t stream);

// The blocks LaunchChannelSums splits each channel's sum over: its scratch
// memory holds ChannelSumSplits(view) * view.channels doubles.
inline int64_t ChannelSumSplits(const ChannelView& view) {
  constexpr int64_t kMaxGrid = 65535;
  // Enough blocks to fill a large device, each with enough to add.
  constexpr int64_t kTargetBlocks = 1024;
  const bool rows = view.Rows();
  const int64_t channel_blocks =
      std::min(rows ? (view.channels + 31) / 32 : view.channels, kMaxGrid);
  const int64_t fewest_per_block = rows ? 64 : 2048;
  const int64_t splits = std::min(
      (view.outer * view.inner + fewest_per_block - 1) / fewest_per_block,
      std::max<int64_t>(1,
                        kTargetBlocks / std::max<int64_t>(channel_blocks, 1)));
  return std::max<int64_t>(1, std::min(splits, kMaxGrid));
}

// out[c] = the sum of channel c of x, as `view` lays it out, added in
// double (as the CPU kernel adds the bias gradient). `partial` is scratch
// memory of ChannelSumSplits(view) * view.channels doubles.
template <typename T>
void LaunchChannelSums(const T* x, const ChannelView& view, double* partial,
                       T* out, cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_CONV2D_CUDA_H_
