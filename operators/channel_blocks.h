// The channel-blocked image layout "NCHW8c" (oneDNN's nChw8c): an image of
// C channels, C a multiple of 8, held as [N, C / 8, H, W, 8]; channel c of
// pixel (h, w) of sample n lies at [n, c / 8, h, w, c % 8].
//
// On CPUs whose widest vectors hold 8 floats (AVX2), oneDNN's convolutions
// run fastest on this layout: each load of 8 floats is 8 channels of one
// pixel, and the 8 channels of a block lie next to each other for every
// pixel. conv2d, pool2d and transfer_layout take it as data_format
// "NCHW8c"; the executor's layout rewrite keeps CNN activations in it.
#ifndef SCOPEFLOW_OPERATORS_CHANNEL_BLOCKS_H_
#define SCOPEFLOW_OPERATORS_CHANNEL_BLOCKS_H_

#include <array>
#include <cstdint>

namespace scopeflow {

// Channels per block.
inline constexpr int64_t kChannelBlock = 8;
// The data_format value that names the layout.
inline constexpr char kChannelBlockedFormat[] = "NCHW8c";

// One box of elements walked in the same order through an NCHW image and
// its NCHW8c form: dims [N, C / 8, H, W, 8], with each layout's strides in
// elements. For CopyStrided (operators/strided_copy.h) in either direction.
struct ChannelBlockBox {
  std::array<int64_t, 5> dims;
  std::array<int64_t, 5> nchw_strides;
  std::array<int64_t, 5> blocked_strides;
};

// The box of an image with `n`, `c`, `h` and `w` its NCHW sizes; `c` a
// multiple of kChannelBlock.
inline ChannelBlockBox ChannelBlockBoxOf(int64_t n, int64_t c, int64_t h,
                                         int64_t w) {
  const int64_t blocks = c / kChannelBlock;
  const int64_t plane = h * w;
  return {
      {n, blocks, h, w, kChannelBlock},
      {c * plane, kChannelBlock * plane, w, 1, plane},
      {c * plane, plane * kChannelBlock, w * kChannelBlock, kChannelBlock, 1}};
}

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_CHANNEL_BLOCKS_H_
