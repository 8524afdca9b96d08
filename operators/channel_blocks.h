// The channel-blocked image layouts "NCHW8c" and "NCHW16c" (oneDNN's
// nChw8c and nChw16c): an image of C channels, C a multiple of the block B
// (8 or 16), held as [N, C / B, H, W, B]; channel c of pixel (h, w) of
// sample n lies at [n, c / B, h, w, c % B].
//
// oneDNN's convolutions run fastest on the block that fills the CPU's
// widest vectors, 8 floats with AVX2 and 16 with AVX-512: each load is B
// channels of one pixel, and the B channels of a block lie next to each
// other for every pixel. Its Winograd kernels (AVX-512) take 16-channel
// blocks only. conv2d, pool2d and transfer_layout take both layouts as
// data_format; the executor's layout rewrite keeps CNN activations in the
// one that fits the CPU.
#ifndef SCOPEFLOW_OPERATORS_CHANNEL_BLOCKS_H_
#define SCOPEFLOW_OPERATORS_CHANNEL_BLOCKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace scopeflow {

// The data_format values that name the blocked layouts.
inline constexpr char kNchw8cFormat[] = "NCHW8c";
inline constexpr char kNchw16cFormat[] = "NCHW16c";

// Channels per block of the blocked layout data_format `format` names; 0
// for any other name (NCHW, NHWC).
inline int64_t ChannelBlockOfFormat(absl::string_view format) {
  if (format == kNchw8cFormat) return 8;
  if (format == kNchw16cFormat) return 16;
  return 0;
}

// The data_format values of ops that take an image in any layout.
inline std::vector<std::string> ImageFormatNames() {
  return {"NCHW", "NHWC", kNchw8cFormat, kNchw16cFormat};
}

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_CHANNEL_BLOCKS_H_
