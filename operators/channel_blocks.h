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

#include <cstdint>

namespace scopeflow {

// Channels per block.
inline constexpr int64_t kChannelBlock = 8;
// The data_format value that names the layout.
inline constexpr char kChannelBlockedFormat[] = "NCHW8c";

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_CHANNEL_BLOCKS_H_
