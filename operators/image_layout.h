// The image layouts NCHW, NHWC and NCHW8c (operators/channel_blocks.h), an
// image's sizes whatever its layout, and the strided box that moves an
// image from one layout to another. Shared by transfer_layout, whose whole
// work this is, and conv2d, whose reference kernel reaches NCHW this way.
#ifndef SCOPEFLOW_OPERATORS_IMAGE_LAYOUT_H_
#define SCOPEFLOW_OPERATORS_IMAGE_LAYOUT_H_

#include <cstdint>

#include "absl/types/span.h"
#include "framework/tensor.h"

namespace scopeflow {

enum class ImageFormat { kNchw, kNhwc, kNchw8c };

// The rank of an image in `format`: 4, or 5 for NCHW8c.
int ImageRank(ImageFormat format);

// An image's sizes whatever its layout; -1 where unknown.
struct ImageSizes {
  int64_t n, c, h, w;
};

// The sizes of an image of `dims`, ImageRank(format) of them, in `format`.
// For NCHW8c, c is dims[1] * kChannelBlock, which the caller has checked
// fits in int64.
ImageSizes ImageSizesOf(absl::Span<const int64_t> dims, ImageFormat format);

// The dims of an image of `sizes` in `format`; for NCHW8c, sizes.c is
// unknown or a multiple of kChannelBlock.
Dims ImageDimsOf(const ImageSizes& sizes, ImageFormat format);

// One box of elements walked in the same order through an image in two
// layouts, with each layout's strides in elements: [N, C, H, W], or
// [N, C / 8, H, W, 8] where either layout is NCHW8c. For CopyStrided
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
