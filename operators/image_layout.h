// The image layouts NCHW, NHWC, NCHW8c and NCHW16c
// (operators/channel_blocks.h), an
// image's sizes whatever its layout, and the strided box that moves an
// image from one layout to another. Shared by transfer_layout, whose whole
// work this is, and conv2d, whose reference kernel reaches NCHW this way.
#ifndef SCOPEFLOW_OPERATORS_IMAGE_LAYOUT_H_
#define SCOPEFLOW_OPERATORS_IMAGE_LAYOUT_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/tensor.h"

namespace scopeflow {

enum class ImageFormat { kNchw, kNhwc, kNchw8c, kNchw16c };

// The format data_format `name` names, or nullopt.
std::optional<ImageFormat> ImageFormatNamed(absl::string_view name);

// The data_format value that names `format`.
const char* ImageFormatName(ImageFormat format);

// Channels per block of a blocked format (8 or 16); 0 for NCHW and NHWC.
int64_t ChannelBlockOf(ImageFormat format);

// The rank of an image in `format`: 4, or 5 for the blocked ones.
int ImageRank(ImageFormat format);

// An image's sizes whatever its layout; -1 where unknown.
struct ImageSizes {
  int64_t n, c, h, w;
};

// The sizes of an image of `dims`, ImageRank(format) of them, in `format`.
// For a blocked format, c is dims[1] times the block, which the caller has
// checked fits in int64.
ImageSizes ImageSizesOf(absl::Span<const int64_t> dims, ImageFormat format);

// The dims of an image of `sizes` in `format`; for a blocked format,
// sizes.c is unknown or a multiple of the block.
Dims ImageDimsOf(const ImageSizes& sizes, ImageFormat format);

// One box of elements walked in the same order through an image in two
// layouts, with each layout's strides in elements: [N, C, H, W], or where
// a layout is blocked [N, C / B, H, W, B] (B its block), or
// [N, C / 16, 2, H, W, 8] between NCHW8c and NCHW16c. For CopyStrided
// (operators/strided_copy.h) and its CUDA twin.
struct TransferBox {
  Dims dims, src_strides, dst_strides;
};

// The box that copies an image of fully known `sizes` from layout `src` to
// layout `dst`.
TransferBox TransferBoxOf(const ImageSizes& sizes, ImageFormat src,
                          ImageFormat dst);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_IMAGE_LAYOUT_H_
